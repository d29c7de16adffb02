import Glibc

/// The process's limit on open file descriptors (RLIMIT_NOFILE): every connection costs one, so it bounds how
/// many a server can hold whatever its own settings say.
public enum OpenFilesLimit {
    /// The soft limit in force (what `open`, `accept` and `socket` are held to).
    public static var current: Int {
        var limit = rlimit()
        guard getrlimit(RLIMIT_NOFILE_VALUE, &limit) == 0 else { return Int.max }
        return limit.rlim_cur >= rlim_t(Int.max) ? Int.max : Int(limit.rlim_cur) // RLIM_INFINITY is all ones
    }

    /// Raises the soft limit to the hard one (many systems start processes at a soft 1,024 with a far higher hard
    /// limit; Go's runtime does the same at start). Returns the soft limit now in force.
    @discardableResult
    public static func raiseToHardLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(RLIMIT_NOFILE_VALUE, &limit) == 0 else { return current }
        if limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max
            _ = setrlimit(RLIMIT_NOFILE_VALUE, &limit)
        }
        return current
    }

    /// Glibc imports RLIMIT_NOFILE as an enum case of `__rlimit_resource`; the calls take its raw value.
    private static var RLIMIT_NOFILE_VALUE: __rlimit_resource_t { __rlimit_resource_t(RLIMIT_NOFILE.rawValue) }
}
