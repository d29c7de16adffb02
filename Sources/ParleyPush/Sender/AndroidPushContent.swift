import ParleyJSON

/// What an Android push says, read from the APNs-shaped payload `PushPayload` builds (pure): one builder decides
/// what every vendor's pushes reveal (previews, languages), and FCM and HMS only reshape it.
///
/// - An alert's `aps.alert` gives the notification's title and body, `aps.badge` its count, `aps.sound` its sound.
/// - Every other top-level field becomes data, all strings as FCM requires: an object's members one level down
///   (`ext: {type, conversation_id, msg_id}` gives `type`, `conversation_id`, `msg_id`), a string as it is (the
///   VoIP push's `ext` stays the JSON string seed 003 parses), anything else as its JSON text.
struct AndroidPushContent: Equatable {
    var title: String?
    var body: String?
    var badge: Int64?
    /// nil: silent; "default": the device's sound.
    var sound: String?
    var data: [(String, String)]

    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.title == rhs.title && lhs.body == rhs.body && lhs.badge == rhs.badge && lhs.sound == rhs.sound
            && lhs.data.elementsEqual(rhs.data, by: { $0 == $1 })
    }

    init(title: String? = nil, body: String? = nil, badge: Int64? = nil, sound: String? = nil, data: [(String, String)])
    {
        self.title = title
        self.body = body
        self.badge = badge
        self.sound = sound
        self.data = data
    }

    init(apnsPayload: [UInt8]) {
        let object = (try? JSONValue.parse(apnsPayload))?.objectValue ?? JSONObject()
        let aps = object["aps"]?.objectValue ?? JSONObject()
        switch aps["alert"] {
        case .object(let alert)?:
            title = alert["title"]?.stringValue
            body = alert["body"]?.stringValue
        case .string(let text)?:
            body = text
        default:
            break
        }
        badge = aps["badge"]?.int64Value
        sound = aps["sound"]?.stringValue
        data = []
        for (key, value) in object where key != "aps" {
            if case .object(let members) = value {
                for (member, inner) in members { data.append((member, Self.text(inner))) }
            } else {
                data.append((key, Self.text(value)))
            }
        }
    }

    /// A notification the device shows (chat); a data-only push otherwise (calls: the app rings itself).
    var isNotification: Bool { body != nil }

    var dataObject: JSONValue { .object(JSONObject(data.map { ($0.0, JSONValue.string($0.1)) })) }

    private static func text(_ value: JSONValue) -> String { value.stringValue ?? value.serializedString }
}
