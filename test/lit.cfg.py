# lit configuration for Cleave's regression tests.
import os
import lit.formats

config.name = "Cleave"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".pbtxt", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.cleave_obj_root, "test")

config.environment["PATH"] = os.pathsep.join(
    [config.cleave_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", os.environ["PATH"])])
config.substitutions.append(("%python", config.python_executable))
# Split marker for text GraphDefs (`#` starts a comment there). Spelled out
# here so that the RUN line itself does not contain the marker.
config.substitutions.append(("%split-pbtxt", '--split-input-file="# -----"'))
config.substitutions.append(("%corpus", config.corpus_dir))
config.substitutions.append(("%cleave_tools_dir", config.cleave_tools_dir))
config.substitutions.append(("%scripts", os.path.join(config.cleave_src_root, "scripts")))
if os.path.isdir(config.corpus_dir):
    config.available_features.add("corpus")

config.substitutions.append(("%cleave_src", config.cleave_src_root))
config.substitutions.append(("%cleave_obj", config.cleave_obj_root))
config.substitutions.append(("%cxx", config.cxx_compiler))
import shutil
if shutil.which("cmake"):
    config.available_features.add("cmake")
# Sanitizer builds: Cleave's code is instrumented, libMLIR is not. Both
# allocate from the same llvm::BumpPtrAllocator slabs, which only the
# instrumented side poisons, so manual poisoning would report false
# use-after-poison errors. Heap, stack and leak checks stay on.
config.environment["ASAN_OPTIONS"] = "allow_user_poisoning=0"
# Long interpreted runs (a minute in Release) skip the sanitizer build,
# where they take ten times longer.
if getattr(config, "sanitizers", "OFF").upper() in ("ON", "1", "TRUE", "YES"):
    config.available_features.add("sanitizers")

# Debian's dataset-fashion-mnist, for the replicated training example.
if os.path.isdir("/usr/share/datasets/fashion-mnist"):
    config.available_features.add("fashion-mnist")

# The PyTorch oracle runs when Debian's python3-torch is installed.
import subprocess
try:
    if subprocess.run(["/usr/bin/python3", "-c", "import torch, numpy"],
                      capture_output=True, timeout=120).returncode == 0:
        config.available_features.add("torch")
except (OSError, subprocess.TimeoutExpired):
    pass
