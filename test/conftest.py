"""Shared pytest configuration."""

import sys
from pathlib import Path

# Test helper modules (ros_harness, exact_reference, ...) live beside the tests.
sys.path.insert(0, str(Path(__file__).resolve().parent))

SHARED_EXAMPLES = Path(__file__).resolve().parents[2] / "shared" / "adf-examples"
