// Tests for ParleyFiles.
