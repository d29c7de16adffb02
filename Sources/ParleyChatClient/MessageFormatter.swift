import ParleyJSON

/// How the chat prints messages: one line each, `[conversation] sender: body  #id`. Pure.
public enum MessageFormatter {
    /// `[label] sender: body  #id`; the id is what `/revoke` and `/edit #id` take.
    public static func line(label: String, sender: String, message: ChatMessage) -> String {
        "[\(label)] \(sender): \(body(of: message))  #\(message.id)"
    }

    /// The message's content as one line of text, or a short description of what it is.
    public static func body(of message: ChatMessage) -> String {
        if message.revoked { return "(revoked)" }
        let content = message.content
        let text: String
        switch message.msgType {
        case "text":
            text = content.stringValue ?? ""
        case "richText":
            text = content["text"]?.stringValue ?? ""
        case "image":
            let width = Int64((content["width"]?.doubleValue ?? 0).rounded())
            let height = Int64((content["height"]?.doubleValue ?? 0).rounded())
            text = "[image \(width)x\(height)" + (content["name"]?.stringValue.map { " \($0)" } ?? "") + "]"
        case "file":
            text = "[file \(content["name"]?.stringValue ?? "?"), \(content["size"]?.int64Value ?? 0) bytes]"
        case "video":
            text = "[video \(seconds(content["durationSec"]))]"
        case "audio":
            text = "[voice \(seconds(content["durationSec"]))]"
        case "location":
            let name = content["name"]?.stringValue.map { "\($0) " } ?? ""
            text = "[location \(name)\(content["lat"]?.description ?? "?"),\(content["lng"]?.description ?? "?")]"
        case "callAudio", "callVideo":
            text =
                "[\(message.msgType == "callAudio" ? "voice" : "video") call"
                + (content["status"]?.stringValue.map { " \($0)" } ?? "") + "]"
        case "forward":
            text = "[\(content["messages"]?.arrayValue?.count ?? 0) forwarded messages]"
        case "notify":
            text = "[group: \((content["event"]?.stringValue ?? "change").replacingUnderscores)]"
        default:
            text = "[\(message.msgType) message]"
        }
        return printable(text) + (message.editedAt != nil ? " (edited)" : "")
    }

    /// Text from other people must not drive the terminal: control characters (escape sequences that could move
    /// the cursor, retitle the window or fake other lines) become U+FFFD; line breaks become "⏎ ".
    public static func printable(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x0A: out.append(contentsOf: "⏎ ".unicodeScalars)
            case 0x09: out.append(" ")
            case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: out.append("\u{FFFD}")
            default: out.append(scalar)
            }
        }
        return String(out)
    }

    private static func seconds(_ value: JSONValue?) -> String {
        guard let seconds = value?.doubleValue else { return "?" }
        return "\(Int(seconds.rounded()))s"
    }
}

private extension String {
    var replacingUnderscores: String { String(map { $0 == "_" ? " " : $0 }) }
}
