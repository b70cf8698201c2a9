// keys.h — the key codes the app reacts to. ImGui 1.86 indexes io.KeysDown by the platform's key codes;
// both the GLFW window and the headless loop use GLFW's codes (values copied from GLFW/glfw3.h so the
// headless code needs no GLFW header).
#pragma once

namespace diffscope::ui {
constexpr int kKeySpace = 32, kKeyD = 68, kKeyS = 83, kKeyH = 72, kKeyA = 65, kKeyC = 67, kKeyV = 86, kKeyX = 88, kKeyY = 89,
              kKeyZ = 90;
constexpr int kKeyEscape = 256, kKeyEnter = 257, kKeyTab = 258, kKeyBackspace = 259, kKeyInsert = 260,
              kKeyDelete = 261, kKeyRight = 262, kKeyLeft = 263, kKeyDown = 264, kKeyUp = 265, kKeyPageUp = 266,
              kKeyPageDown = 267, kKeyHome = 268, kKeyEnd = 269, kKeyKpEnter = 335;
}  // namespace diffscope::ui
