// Outgoing HTTP through libcurl (S3, APNs). Built by the file and push issues.
