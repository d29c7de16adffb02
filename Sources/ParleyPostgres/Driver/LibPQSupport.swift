import CLibPQ

/// Small helpers around libpq's C API.
enum LibPQ {
    /// The connection's last error message, without libpq's trailing newline.
    static func errorMessage(_ conn: OpaquePointer?) -> String {
        guard let conn, let raw = PQerrorMessage(conn) else { return "unknown error" }
        return trimmed(String(cString: raw))
    }

    static func trimmed(_ text: String) -> String {
        var result = Substring(text)
        while let last = result.last, last == "\n" || last == " " { result.removeLast() }
        return String(result).replacingNewlines()
    }

    /// A `PostgresError` from an error result (`PGRES_FATAL_ERROR` and friends).
    static func serverError(from result: OpaquePointer) -> PostgresError {
        func field(_ code: UInt8) -> String? {
            guard let raw = PQresultErrorField(result, Int32(code)) else { return nil }
            return String(cString: raw)
        }
        var message = field(UInt8(ascii: "M"))
        if message == nil, let raw = PQresultErrorMessage(result) { message = trimmed(String(cString: raw)) }
        return PostgresError(
            kind: .server, message: message ?? "unknown server error",
            sqlState: field(UInt8(ascii: "C")), detail: field(UInt8(ascii: "D")),
            constraint: field(UInt8(ascii: "n")), table: field(UInt8(ascii: "t")))
    }

    /// Calls `body` with libpq's parameter arrays for `binds`: one contiguous scratch buffer holds every
    /// NUL-terminated text value (and raw bytea), so a query with binds allocates nothing on the heap
    /// unless its values are large. Lengths and formats are passed only when some value is binary.
    static func withParameters<R>(
        _ binds: [PostgresValue],
        _ body: (Int32, UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?) -> R
    ) -> R {
        let n = binds.count
        if n == 0 { return body(0, nil, nil, nil) }
        var total = 0
        var anyBinary = false
        for bind in binds {
            switch bind.storage {
            case .null: break
            case .text(let text): total += text.utf8.count + 1
            case .binary(let bytes):
                total += bytes.count
                anyBinary = true
            }
        }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(total, 1)) { buffer in
            withUnsafeTemporaryAllocation(of: UnsafePointer<CChar>?.self, capacity: n) { values in
                withUnsafeTemporaryAllocation(of: Int32.self, capacity: 2 * n) { lengthsAndFormats in
                    let base = buffer.baseAddress!
                    var offset = 0
                    for index in 0..<n {
                        lengthsAndFormats[index] = 0
                        lengthsAndFormats[n + index] = 0
                        switch binds[index].storage {
                        case .null:
                            values[index] = nil
                        case .text(var text):
                            let start = offset
                            text.withUTF8 { utf8 in
                                if utf8.count > 0 {
                                    (base + offset).initialize(from: utf8.baseAddress!, count: utf8.count)
                                }
                                offset += utf8.count
                            }
                            (base + offset).initialize(to: 0)
                            offset += 1
                            values[index] = UnsafeRawPointer(base + start).assumingMemoryBound(to: CChar.self)
                            lengthsAndFormats[index] = Int32(offset - start - 1)
                        case .binary(let bytes):
                            let start = offset
                            bytes.withUnsafeBufferPointer { raw in
                                if raw.count > 0 {
                                    (base + offset).initialize(from: raw.baseAddress!, count: raw.count)
                                }
                            }
                            offset += bytes.count
                            values[index] = UnsafeRawPointer(base + start).assumingMemoryBound(to: CChar.self)
                            lengthsAndFormats[index] = Int32(bytes.count)
                            lengthsAndFormats[n + index] = 1
                        }
                    }
                    let lengths = anyBinary ? UnsafePointer(lengthsAndFormats.baseAddress!) : nil
                    let formats = anyBinary ? UnsafePointer(lengthsAndFormats.baseAddress! + n) : nil
                    return body(Int32(n), UnsafePointer(values.baseAddress!), lengths, formats)
                }
            }
        }
    }

    /// Calls `body` with the parameter type OIDs, or nil when every type is left to the server.
    static func withParameterTypes<R>(_ binds: [PostgresValue], _ body: (UnsafePointer<Oid>?) -> R) -> R {
        guard binds.contains(where: { $0.typeOID != 0 }) else { return body(nil) }
        return withUnsafeTemporaryAllocation(of: Oid.self, capacity: binds.count) { types in
            for (index, bind) in binds.enumerated() { types[index] = Oid(bind.typeOID) }
            return body(UnsafePointer(types.baseAddress!))
        }
    }

    /// `"name"` with embedded quotes doubled: safe to splice into SQL as an identifier.
    static func quoteIdentifier(_ name: String) -> String {
        "\"" + name.replacing("\"", with: "\"\"") + "\""
    }
}

extension String {
    fileprivate func replacingNewlines() -> String {
        contains("\n") ? split(separator: "\n").map { $0.trimmingSpaces() }.joined(separator: "; ") : self
    }
}

extension Substring {
    fileprivate func trimmingSpaces() -> Substring {
        var s = self
        while s.first == " " || s.first == "\t" { s.removeFirst() }
        while s.last == " " || s.last == "\t" { s.removeLast() }
        return s
    }
}
