import ParleyJSON

/// Encodes Parley's response envelope. Success bodies are built around the encoded `data` so the
/// envelope keys keep a fixed order (`code`, `message`, `data`).
public enum Envelope {
    public static let successEmpty: [UInt8] = Array(#"{"code":0,"message":"ok","data":null}"#.utf8)

    public static func success<T: Encodable>(_ data: T) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(128)
        out.append(contentsOf: #"{"code":0,"message":"ok","data":"#.utf8)
        do {
            try JSONCoding.bytesEncoder.encode(data, into: &out)
        } catch {
            out.append(contentsOf: "null".utf8)
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    public static func success(json data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(data.count + 34)
        out.append(contentsOf: #"{"code":0,"message":"ok","data":"#.utf8)
        out.append(contentsOf: data)
        out.append(UInt8(ascii: "}"))
        return out
    }

    public static func failure(_ error: APIError) -> [UInt8] {
        var out: [UInt8] = Array(#"{"code":"#.utf8)
        out.append(contentsOf: String(error.code).utf8)
        out.append(contentsOf: #","message":"#.utf8)
        appendJSONString(error.message, to: &out)
        out.append(contentsOf: #","data":"#.utf8)
        out.append(contentsOf: error.data ?? Array("null".utf8))
        out.append(UInt8(ascii: "}"))
        return out
    }

    static func appendJSONString(_ s: String, to out: inout [UInt8]) {
        JSONString.append(s, to: &out)
    }
}
