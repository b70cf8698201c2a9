# labels.cmake — the labels of every discovered GoogleTest test (`ctest -L LABEL`, `-LE LABEL`). ctest includes this
# file after the discovered tests (tests/CMakeLists.txt), whose names are in the binaries' TEST_LIST variables.
# Each test has exactly one kind:
#   unit  fast and in this process: `ctest -L unit` runs in under 10 s on 2 cores
#   e2e   runs the built executables (the diffscope binary, the headless app) and checks what they write
#   slow  takes more than a few seconds (long runs, the bundled models' quality, the soak, the install checks)
# and, where they apply: gpu (needs a CUDA device; skips itself without one), gui (needs GL: Mesa EGL, or a window
# under X), gui_soak (the soak; `-L soak` and `-LE gui` both match it). A test's kind is its suite's (the lists
# below, by the test file's folder), unless the test is in DIFFSCOPE_SLOW_TESTS.

# Suites that run the built executables: every suite of tests/cli/, and of tests/ui/ and tests/picture/ those that
# run the headless app or `diffscope sample --png`.
set(DIFFSCOPE_E2E_SUITES
  # tests/cli
  BenchCli BundledModelCli Cli CliRanges FamilyCli GridCli InfoCommand ModelFilesCli OutputsCli Progress SampleNoise ScheduleCli
  SchedulerConfigCli StopAndOutputsCli TrainCli
  # tests/ui
  AppModel CommandLine ComputePaths DisplayEdges GuiHeadless GuiWindow HeadlessEdges LiveLoop OpenWith
  DrawModeScript ParticlePick ReadmeCommands SchedulePanel ScriptFailures ScriptRanges SettingsFile UiLayout
  # tests/picture
  ExportFaults ExportFramesPath FigureRun FullDisk GridPng PictureConfig PngText Restore SamplePng SampleVideo StopSignalVideo
  # tests/gpu: the cuBLAS loader runs the binary
  CublasLoader)
# Tests of more than a few seconds on 2 cores (suite.name, or a regular expression on the full name).
set(DIFFSCOPE_SLOW_TESTS
  "^BundledModels/ModelQuality\\.DdimMatchesHeldOutData/"  # 7-30 s each: 100 splits of each bundled model's data
  "^Golden\\.Sample$"
  "^GridRun\\.ExactOdeColumnMatchesExactLab$"  # 1.4 s: nine exact-ODE solves of 256 rows
  "^TrainCli\\.ASmallFlowModelTrainedOnTheCpuSamplesNearItsHeldOutData$"  # 4-8 s: the CI model trained and sampled
  "^TrainCli\\.MoreRowsThanTheCapAreRefused$"  # writes and reads a 40 MB .npy
  "^Solvers\\.StochasticSolversMatchTheClosedFormMarginal$"
  "^CliRanges\\.ThreadsBoundaries$"
  "^Progress\\.SampleShowsItsStepsWithTheTimeLeftOnATerminal$"
  "^PictureConfig\\.SamplePngKeepsTheGuiDefaultsAtEveryN$"
  "^ReadmeCommands\\."
  "^SampleVideo\\.LosslessMp4FramesEqualThePngsAndDefaultsAreWithin35dB$"
  "^ScriptRanges\\.ScriptValues"
  "^StopSignalVideo\\.Sig"
  "^UiLayout\\.NothingClippedAt1280x800FromUiScale1To2$"
  "^Soak\\.")

foreach(binary diffscope_tests diffscope_gui_tests diffscope_gui_soak diffscope_gpu_tests)
  set(extra "")
  if(binary STREQUAL "diffscope_gui_tests")
    set(extra ";gui")
  elseif(binary STREQUAL "diffscope_gui_soak")
    set(extra ";gui_soak")
  elseif(binary STREQUAL "diffscope_gpu_tests")
    set(extra ";gpu")
  endif()
  foreach(test IN LISTS ${binary}_TESTS)
    string(REGEX REPLACE "^([^.]*/)?([A-Za-z0-9_]+)\\..*" "\\2" suite "${test}")
    set(kind unit)
    list(FIND DIFFSCOPE_E2E_SUITES "${suite}" e2e)  # (ctest reads this file without CMP0057: no IN_LIST)
    if(NOT e2e EQUAL -1)
      set(kind e2e)
    endif()
    foreach(pattern IN LISTS DIFFSCOPE_SLOW_TESTS)
      if(test MATCHES "${pattern}")
        set(kind slow)
      endif()
    endforeach()
    set_tests_properties("${test}" PROPERTIES LABELS "${kind}${extra}")
  endforeach()
endforeach()
