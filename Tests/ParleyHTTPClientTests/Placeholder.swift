// Tests for ParleyHTTPClient.
