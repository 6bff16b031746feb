"""The differential program fuzzer: retrograd against PyTorch 2.13 (see README.md)."""
