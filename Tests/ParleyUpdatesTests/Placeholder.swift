// Tests for ParleyUpdates.
