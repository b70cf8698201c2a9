# Type stubs of the package diffscope (python/diffscope/__init__.py.in): the names it exports from its
# extension module, typed in _diffscope.pyi. tests/install/test_python_stubs.py checks both against the runtime.
from . import _diffscope as _diffscope
from ._diffscope import CudaArray as CudaArray  # CUDA builds only (diffscope.cuda_available() tells a usable device)
from ._diffscope import Model as Model
from ._diffscope import bundled_models as bundled_models
from ._diffscope import cuda_available as cuda_available
from ._diffscope import get_threads as get_threads
from ._diffscope import grid as grid
from ._diffscope import load as load
from ._diffscope import mlp3 as mlp3
from ._diffscope import set_threads as set_threads
from ._diffscope import train as train

__version__: str
