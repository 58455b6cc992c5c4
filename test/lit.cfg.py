# -*- Python -*-
import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "TTT"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.ttt_obj_root, "test")
config.excludes = ["CMakeLists.txt", "README.md", "lit.cfg.py", "lit.site.cfg.py", "python", "fixtures"]

# Captured names must not leak between CHECK-LABEL sections.
config.environment["FILECHECK_OPTS"] = "--enable-var-scope"

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

config.substitutions.append(("%ttt_lib_dir", config.ttt_lib_dir))
config.substitutions.append(("%ttt_src_root", config.ttt_src_root))
config.substitutions.append(("%mlir_opt", os.path.join(config.llvm_tools_dir, "mlir-opt")))

tools = [ToolSubst("ttt-opt", unresolved="fatal"), ToolSubst("ttt-run", unresolved="fatal")]
llvm_config.add_tool_substitutions(tools, [config.ttt_tools_dir, config.llvm_tools_dir])

# %python is the project's Python (the one with onnx and numpy), not the one
# lit runs under, which use_default_substitutions() set it to. test/ONNX makes
# its models with it, and is skipped where it lacks onnx.
import shutil
import subprocess

python = config.python_executable or shutil.which("python3") or "python3"
config.substitutions = [(k, v) for k, v in config.substitutions if k != "%python"]
config.substitutions.append(("%python", python))
if subprocess.run([python, "-c", "import onnx, numpy"], capture_output=True).returncode == 0:
    config.available_features.add("onnx-python")

# CUDA's ptxas (and fatbinary), for the tests that assemble ttt-to-gpu's PTX:
# looked up on PATH, then under $CUDA_HOME/$CUDA_PATH/$CUDA_ROOT and
# /usr/local/cuda. Machines without CUDA skip those tests (REQUIRES: ptxas).
def find_cuda_tool(name):
    found = shutil.which(name)
    if found:
        return found
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"),
                 os.environ.get("CUDA_ROOT"), "/usr/local/cuda"):
        if root and os.access(os.path.join(root, "bin", name), os.X_OK):
            return os.path.join(root, "bin", name)
    return None


ptxas = find_cuda_tool("ptxas")
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
    # The toolkit root, for gpu-module-to-binary (ptxas, fatbinary, libdevice).
    config.substitutions.append(("%cuda_toolkit", os.path.dirname(os.path.dirname(ptxas))))
    if os.access(os.path.join(os.path.dirname(ptxas), "fatbinary"), os.X_OK):
        config.available_features.add("fatbinary")
