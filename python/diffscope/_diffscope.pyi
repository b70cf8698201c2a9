# Type stubs of the extension module diffscope._diffscope (python/module.cpp, python/cuda_arrays.cpp).
# Each docstring is the runtime's, word for word, and each parameter list the binding's (names, order,
# defaults): tests/install/test_python_stubs.py compares them.
import os
from typing import Any, Callable, Literal, Sequence, SupportsIndex, overload

import numpy as np
import numpy.typing as npt

_Path = str | os.PathLike[str]
_Int = SupportsIndex
# x on the host: a 2-D float array, or anything numpy.asarray turns into one.
_HostMatrix = npt.NDArray[Any] | Sequence[Sequence[float]]
_Float32 = npt.NDArray[np.float32]
# sigmas: a 1-D sequence or array of real numbers.
_Sigmas = Sequence[float] | npt.NDArray[Any]

class Model:
    """A loaded diffusion model: its eps-network and noise schedule, made by diffscope.load. Calls on
one Model run one at a time (other Python threads run meanwhile); different Models run
concurrently.
See README.md "Python" and docs/SEMANTICS.md §1-§2 (installed with the package: help(diffscope))."""

    @property
    def path(self) -> str:
        """The model file's path."""
    @property
    def dim(self) -> int:
        """The data dimension: sample() returns (n, dim) arrays."""
    @property
    def hidden(self) -> int:
        """The eps-network's hidden width."""
    @property
    def T(self) -> int:
        """The number of diffusion timesteps: t in [0, T - 1]."""
    @property
    def n_data(self) -> int:
        """The number of rows of data_samples (0 when the model file has none)."""
    @property
    def alphas_cumprod(self) -> npt.NDArray[np.float64]:
        """The noise schedule's alpha-bar_t for t = 0 .. T - 1: a new float64 array (T,)."""
    @property
    def data_samples(self) -> _Float32:
        """The data points stored in the model file: a new float32 array (n_data, dim)."""
    @property
    def prediction_type(self) -> str:
        """The model family the file names ('epsilon' when it names none; docs/SEMANTICS.md §2):
'epsilon', 'sample', 'v_prediction', 'flow' or 'edm'."""
    @property
    def convention(self) -> str:
        """One line on the model family, as `diffscope info`'s convention line: the family, its
state, the network's time input and T."""
    def __repr__(self) -> str:
        """The name it was loaded by, dim, hidden and T."""
    # sample: x on the host; (x, trajectory) on the host; a CudaArray; (x, trajectory) as CudaArrays; any mix.
    @overload
    def sample(self, n: _Int = 4096, sampler: str = "ddim", spacing: str | None = None,
               steps_offset: _Int | None = None, eta: float = 0.0, steps: _Int | None = None,
               t_start: _Int | None = None, seed: _Int = 0, from_data: bool = False, backend: str = "cpu",
               precision: str = "fp32", trajectory: Literal[False] = False, trajectory_stride: _Int = 1,
               out: Literal["numpy"] = "numpy", stream: int | None = None,
               scheduler_config: _Path | None = None,
               prediction_type: str | None = None, sigmas: _Sigmas | None = None,
               flow_shift: float | None = None, flow_mu: float | None = None,
               class_label: _Int | None = None, guidance_scale: float = 1.0,
               guidance_interval: tuple[float, float] | None = None, guidance_rescale: float = 0.0) -> _Float32: ...
    @overload
    def sample(self, n: _Int = 4096, sampler: str = "ddim", spacing: str | None = None,
               steps_offset: _Int | None = None, eta: float = 0.0, steps: _Int | None = None,
               t_start: _Int | None = None, seed: _Int = 0, from_data: bool = False, backend: str = "cpu",
               precision: str = "fp32", *, trajectory: Literal[True], trajectory_stride: _Int = 1,
               out: Literal["numpy"] = "numpy", stream: int | None = None,
               scheduler_config: _Path | None = None,
               prediction_type: str | None = None, sigmas: _Sigmas | None = None,
               flow_shift: float | None = None, flow_mu: float | None = None,
               class_label: _Int | None = None, guidance_scale: float = 1.0,
               guidance_interval: tuple[float, float] | None = None, guidance_rescale: float = 0.0) -> tuple[_Float32, _Float32]: ...
    @overload
    def sample(self, n: _Int = 4096, sampler: str = "ddim", spacing: str | None = None,
               steps_offset: _Int | None = None, eta: float = 0.0, steps: _Int | None = None,
               t_start: _Int | None = None, seed: _Int = 0, from_data: bool = False, backend: str = "cpu",
               precision: str = "fp32", trajectory: Literal[False] = False, trajectory_stride: _Int = 1, *,
               out: Literal["cuda"], stream: int | None = None,
               scheduler_config: _Path | None = None,
               prediction_type: str | None = None, sigmas: _Sigmas | None = None,
               flow_shift: float | None = None, flow_mu: float | None = None,
               class_label: _Int | None = None, guidance_scale: float = 1.0,
               guidance_interval: tuple[float, float] | None = None, guidance_rescale: float = 0.0) -> CudaArray: ...
    @overload
    def sample(self, n: _Int = 4096, sampler: str = "ddim", spacing: str | None = None,
               steps_offset: _Int | None = None, eta: float = 0.0, steps: _Int | None = None,
               t_start: _Int | None = None, seed: _Int = 0, from_data: bool = False, backend: str = "cpu",
               precision: str = "fp32", *, trajectory: Literal[True], trajectory_stride: _Int = 1,
               out: Literal["cuda"], stream: int | None = None,
               scheduler_config: _Path | None = None,
               prediction_type: str | None = None, sigmas: _Sigmas | None = None,
               flow_shift: float | None = None, flow_mu: float | None = None,
               class_label: _Int | None = None, guidance_scale: float = 1.0,
               guidance_interval: tuple[float, float] | None = None, guidance_rescale: float = 0.0) -> tuple[CudaArray, CudaArray]: ...
    @overload
    def sample(self, n: _Int = 4096, sampler: str = "ddim", spacing: str | None = None,
               steps_offset: _Int | None = None, eta: float = 0.0, steps: _Int | None = None,
               t_start: _Int | None = None, seed: _Int = 0, from_data: bool = False, backend: str = "cpu",
               precision: str = "fp32", trajectory: bool = False, trajectory_stride: _Int = 1,
               out: str = "numpy", stream: int | None = None, scheduler_config: _Path | None = None,
               prediction_type: str | None = None, sigmas: _Sigmas | None = None,
               flow_shift: float | None = None, flow_mu: float | None = None,
               class_label: _Int | None = None, guidance_scale: float = 1.0,
               guidance_interval: tuple[float, float] | None = None, guidance_rescale: float = 0.0
               ) -> _Float32 | tuple[_Float32, _Float32] | CudaArray | tuple[CudaArray, CudaArray]:
        """Samples n points, as `diffscope sample`: float32 (n, dim). With trajectory=True, (x, trajectory):
the frames 0, s, 2s, ... and the last (s = trajectory_stride), (frames, n, dim).
sampler: 'ddim', 'ddpm', 'dpmpp-2m', ... (the solvers of `diffscope sample --sampler`); spacing:
'default', 'leading', 'linspace', 'trailing', 'karras' or None; eta: the noise scale of ddim.
t_start defaults to the model's last usable timestep (T - 1, or info's t_start_max_usable), steps to
t_start + 1; from_data=True starts from the model's data_samples noised to t_start.
Integer arguments (n, steps, t_start, seed, steps_offset, trajectory_stride) take any integer with
__index__ (int, numpy.int64, numpy.uint64, ...; not bool).
backend: 'cpu' or 'cuda'; precision: 'fp32', or 'tf32' / 'bf16' / 'fp16' with backend='cuda'.
backend='cuda' with out='cuda' returns diffscope.CudaArray (no copy to the host); stream: None (finished
when the call returns) or a cudaStream_t as an int (enqueued there).
scheduler_config: a diffusers scheduler_config.json path, as --scheduler-config: its schedule (unless
the model file has its own) and its spacing and steps_offset where spacing / steps_offset are None
(without a config None means 'default' and 0).
Model families (as --prediction-type, --sigmas, --flow-shift, --flow-mu): prediction_type ('epsilon',
'sample', 'v_prediction', 'flow', 'edm') for a file that names none (a file naming another raises
ValueError); sigmas: a typed list of noise levels in the family's own level (VE sigma for the VP
families and edm, s for flow), strictly decreasing, > 0 but the last; flow_shift (> 0) and flow_mu
(diffusers' dynamic shifting) for flow lists. t_start on a flow, edm or sigmas list is the index of
the first step.
Classes and guidance (as --class, --guidance-scale, --guidance-interval, --guidance-rescale; CPU only):
class_label (None: the null class) of a model with class_emb.weight; guidance_scale w (diffusers'):
o_u + w (o_c - o_u), 1 the class alone; guidance_interval (lo, hi) in VE sigma, w = 1 outside;
guidance_rescale phi in [0, 1].
See README.md "Python" and docs/SEMANTICS.md §2-§3 and §12 (installed with the package: help(diffscope))."""
    # denoise: a host x gives new arrays; a CUDA array x (any type: torch, CuPy, Numba) is updated and returned.
    @overload
    def denoise(self, x: _HostMatrix, t_start: _Int | Sequence[_Int] | npt.NDArray[np.integer[Any]],
                steps: _Int, backend: str = "cpu", precision: str = "fp32", trajectory: Literal[False] = False,
                stream: int | None = None, prediction_type: str | None = None) -> _Float32: ...
    @overload
    def denoise(self, x: _HostMatrix, t_start: _Int | Sequence[_Int] | npt.NDArray[np.integer[Any]],
                steps: _Int, backend: str = "cpu", precision: str = "fp32", *, trajectory: Literal[True],
                stream: int | None = None, prediction_type: str | None = None) -> tuple[_Float32, _Float32]: ...
    @overload
    def denoise(self, x: Any, t_start: _Int | Sequence[_Int] | npt.NDArray[np.integer[Any]], steps: _Int,
                backend: str = "cpu", precision: str = "fp32", trajectory: bool = False,
                stream: int | None = None, prediction_type: str | None = None) -> Any:
        """`steps` ddpm-mean steps from per-row t_start, as `diffscope denoise`: float32 (B, dim), or with
trajectory=True (x, trajectory (steps + 1, B, dim)).
x: (B, dim) float16, float32 or float64 (a numpy array, anything numpy.asarray takes, or a host DLPack
tensor; integer, bool, complex and other dtypes are refused, as by --x); t_start: an integer or B
integers (an integer array, signed or unsigned). A CUDA array x (__cuda_array_interface__ or DLPack,
float32, with backend='cuda') is updated in place and returned; stream as in Model.sample.
prediction_type: the family of a file that names none, as in Model.sample; x is that family's state.
See README.md "Python" and docs/SEMANTICS.md §4 and §6 (installed with the package: help(diffscope))."""

class CudaArray:
    """A float32 C-contiguous array in CUDA device memory made by diffscope; exposes
__cuda_array_interface__ (v3) and DLPack (torch.from_dlpack, cupy.from_dlpack)."""

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape, a tuple of ints: (rows, cols)."""
    @property
    def device(self) -> int:
        """The CUDA device's ordinal."""
    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        """The CUDA Array Interface (version 3) dict: shape, typestr '<f4', data, version, strides, stream."""
    def __dlpack__(self, stream: int | None = None) -> Any:
        """A DLPack capsule of the array (no copy). stream: the consumer's stream (DLPack's convention), which
is ordered after the work that made the array; None: that work is finished first."""
    def __dlpack_device__(self) -> tuple[int, int]:
        """(2, device): DLPack's kDLCUDA and the device's ordinal."""
    def numpy(self) -> _Float32:
        """A host copy as a float32 numpy array."""

def bundled_models() -> list[str]:
    """The names of the bundled models, which diffscope.load takes."""

def cuda_available() -> bool:
    """True when this build has CUDA and a CUDA device is usable (backend='cuda')."""

def grid(spec: str | dict[str, Any], model: str = "", n: _Int = 4096, sampler: str = "ddim", steps: _Int | None = None,
         t_start: _Int | None = None, spacing: str | None = None, eta: float = 0.0, seed: _Int = 0,
         backend: str = "cpu", precision: str = "fp32", position: float | None = None,
         align: str = "noise", trajectories: bool = False) -> dict[str, Any]:
    """The comparison grid, as `diffscope sample --grid`: spec 'rows=AXIS:V1,V2,... cols=AXIS:V1,...' (axes
sampler, steps, spacing, eta, precision, model, t_start, guidance_scale; at most 8 values each), '@spec.json' or a dict
{'rows': {'axis': ..., 'values': [...]}, 'cols': {...}}; the other arguments are every cell's settings,
as in Model.sample (model: a bundled name or a path, unless the spec has a model axis). Every cell starts
from the same noise (seed) and equals Model.sample with its settings. Returns a dict: 'x' float32
(rows, cols, n, dim), the final samples (with position, a shared timeline position in [0, 1], each cell's
state there, cells aligned by noise level or, align='step', by step); 'cells' one dict of metrics per
cell, row-major (evaluations, wall_ms, energy_distance and energy_floor, exact_ode_rms, displacement
against ref_row/ref_col, path_length, straightness, frame); 'spec' the spec as a dict; 'rows' and 'cols'
the labels; with trajectories=True also 'trajectories', per cell (row-major) its kept frames float32
(n_kept, n, dim), and 'trajectory_frames' their frame indices (every frame unless a cell's frames would
exceed 32 Mi floats, then every k-th and the last).
See README.md "Python" and docs/SEMANTICS.md §10 (installed with the package: help(diffscope))."""

def load(path_or_name: _Path) -> Model:
    """Loads a model: a bundled one by name ('moons'; the names: bundled_models()) or a .safetensors file by
path (str or os.PathLike).
See README.md "Python" and docs/SEMANTICS.md §6 (installed with the package: help(diffscope))."""

# mlp3: a host x gives a numpy array; a CUDA array x a CudaArray.
@overload
def mlp3(weights: _Path, x: _HostMatrix, backend: str = "cpu", precision: str = "fp32",
         stream: int | None = None) -> _Float32: ...
@overload
def mlp3(weights: _Path, x: Any, backend: str = "cpu", precision: str = "fp32",
         stream: int | None = None) -> _Float32 | CudaArray:
    """The fused bias-free 3-layer MLP y = relu(relu(x W1^T) W2^T) W3^T, as `diffscope mlp3`: weights a
.safetensors path (str or os.PathLike), x (B, d0) float16/32/64 -> float32 (B, d3). A CUDA array x
(with backend='cuda') gives a diffscope.CudaArray; stream as in Model.sample.
See README.md "Python" and docs/SEMANTICS.md §5 (installed with the package: help(diffscope))."""

def set_threads(threads: _Int | None) -> None:
    """Limits the CPU backend to `threads` threads (an int in [1, 1024]; None: every core this process may use,
the default) for the whole process, as the CLI's --threads. Results do not depend on it, bit for bit.
Small calls run on the calling thread; a forked child (multiprocessing, DataLoader workers) computes on
its calling thread.
See README.md "Python" and docs/decisions/cpu-threading.md (installed with the package: help(diffscope))."""

def get_threads() -> int:
    """The number of threads the CPU backend uses (diffscope.set_threads)."""

def train(data: _HostMatrix | _Path, out: _Path, objective: str | None = None, steps: _Int | None = None,
          hidden: _Int | None = None, batch: _Int | None = None, lr: float | None = None,
          warmup: _Int | None = None, final_lr_frac: float | None = None, ema: float | None = None,
          seed: _Int | None = None, time_sampling: str | None = None, logit_mean: float | None = None,
          logit_std: float | None = None, loss_weighting: str | None = None, snr_gamma: float | None = None,
          schedule: str | None = None, beta_start: float | None = None, beta_end: float | None = None,
          holdout: float = 0.1, normalize: str = "standard", mixture_rows: _Int = 20000,
          checkpoint: _Path | None = None, checkpoint_every: _Int = 0, resume: _Path | None = None,
          progress: Callable[[int, int, float], object] | None = None, backend: str = "cpu",
          precision: str = "fp32") -> Model:
    """Trains the eps-network of docs/SEMANTICS.md §2 on the CPU or the GPU, as `diffscope train`, writes the model
file `out` and its checkpoint, and returns the trained Model. data: a numpy array (N, dim) of floats (dim <=
64, N <= 10^7), a .npy path, a bundled model's name or a model file (its data_samples), or a
gaussian_mixture file. Keywords (None: the default of `diffscope train --help`): objective, steps, hidden,
batch, lr, warmup, final_lr_frac, ema, seed, time_sampling, logit_mean, logit_std, loss_weighting,
snr_gamma, schedule, beta_start, beta_end; holdout (0.1), normalize ('standard'), mixture_rows (20000),
checkpoint (None: OUT.ckpt.safetensors), checkpoint_every (0), resume (a checkpoint path: its settings, the
same data), progress (a callable(step, total, loss), called about 100 times), backend ('cpu' or 'cuda': the
same maths and random numbers), precision ('fp32'; 'bf16': cuda only, PyTorch's autocast). Ctrl+C writes the
last complete step's files and raises KeyboardInterrupt.
See README.md "Python" and docs/SEMANTICS.md §11 (installed with the package: help(diffscope))."""

def _set_data_root(root: str) -> None:
    """Adds an installed share/diffscope folder to the roots searched for bundled models (after DIFFSCOPE_ROOT)."""
