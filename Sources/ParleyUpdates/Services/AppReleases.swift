/// One app's update tracks, keyed by platform and channel: what `ReleaseCache` holds per app. A platform or
/// channel without releases has no track and answers "no update" without any lookup elsewhere.
public struct AppReleases: Sendable {
    struct TrackKey: Hashable, Sendable {
        var platform: String
        var channel: String
    }

    let tracks: [TrackKey: UpdateTrack]

    /// `releases`: the app's releases that are not withdrawn.
    public init(appId: Int64, releases: [Release]) {
        let grouped = Dictionary(grouping: releases.filter { !$0.isWithdrawn }) {
            TrackKey(platform: $0.platform, channel: $0.channel)
        }
        tracks = grouped.mapValues { UpdateTrack(appId: appId, releases: $0) }
    }

    public func track(platform: String, channel: String) -> UpdateTrack? {
        tracks[TrackKey(platform: platform, channel: channel)]
    }

    public func answer(platform: String, channel: String, versionCode: Int64, subject: String?) -> UpdateAnswer {
        track(platform: platform, channel: channel)?.answer(versionCode: versionCode, subject: subject) ?? .noUpdate
    }
}
