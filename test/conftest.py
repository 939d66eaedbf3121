"""Shared pytest configuration."""

import os
import sys
from pathlib import Path

from hypothesis import settings

# CI (HYPOTHESIS_PROFILE=ci, set by .ci/run): the same examples on every run, so that a landing
# never depends on the draw; locally the default profile keeps exploring new examples.
settings.register_profile("ci", derandomize=True, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

# Test helper modules (ros_harness, exact_reference, ...) live beside the tests.
sys.path.insert(0, str(Path(__file__).resolve().parent))

SHARED_EXAMPLES = Path(__file__).resolve().parents[2] / "shared" / "adf-examples"
