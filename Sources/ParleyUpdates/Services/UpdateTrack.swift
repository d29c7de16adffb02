/// The releases of one app, platform and channel that an update check can offer, with their answers encoded.
///
/// - The caller is offered the newest release whose rollout includes it (`RolloutBucket`); it needs an update
///   when that release's versionCode is above its own.
/// - It must update (`forceUpdate`) when its versionCode is below `requiredVersionCode`, the highest
///   `minSupportedVersionCode` of any release of the track that is not withdrawn, whatever the rollouts. A forced
///   caller is always given a release that satisfies the minimum: the newest one offered to it if that does,
///   else the newest release of the track (a partial rollout yields to a forced update: the caller cannot go on
///   as it is).
///
/// Releases older than the newest full (100%) rollout can never be chosen, so they are not kept.
public struct UpdateTrack: Sendable {
    /// A class: the decision walks candidates on every check, and copying one is then a single retain.
    final class Candidate: Sendable {
        let releaseId: Int64
        let versionCode: Int64
        let rolloutPercent: Int
        let update: UpdateAnswer
        let forcedUpdate: UpdateAnswer

        init(
            releaseId: Int64, versionCode: Int64, rolloutPercent: Int, update: UpdateAnswer, forcedUpdate: UpdateAnswer
        ) {
            self.releaseId = releaseId
            self.versionCode = versionCode
            self.rolloutPercent = rolloutPercent
            self.update = update
            self.forcedUpdate = forcedUpdate
        }
    }

    let appId: Int64
    /// Newest first, down to and including the newest full rollout.
    let candidates: [Candidate]
    public let requiredVersionCode: Int64?

    /// `releases`: the track's releases that are not withdrawn, in any order.
    init(appId: Int64, releases: [Release]) {
        self.appId = appId
        let sorted = releases.filter { !$0.isWithdrawn }.sorted { $0.versionCode > $1.versionCode }
        requiredVersionCode = sorted.compactMap(\.minSupportedVersionCode).max()
        var candidates: [Candidate] = []
        for release in sorted {
            let info = UpdateInfo(release)
            candidates.append(
                Candidate(
                    releaseId: release.id, versionCode: release.versionCode, rolloutPercent: release.rolloutPercent,
                    update: UpdateAnswer(UpdateCheckResult(needsUpdate: true, forceUpdate: false, info: info)),
                    forcedUpdate: UpdateAnswer(UpdateCheckResult(needsUpdate: true, forceUpdate: true, info: info))))
            if release.rolloutPercent >= 100 { break }
        }
        self.candidates = candidates
    }

    /// What a caller at `versionCode` gets; `subject` ("u:<user id>" or "d:<device id>") draws its rollout bucket.
    public func answer(versionCode: Int64, subject: String?) -> UpdateAnswer {
        let decision = decide(versionCode: versionCode, subject: subject)
        guard let index = decision.candidate else { return .noUpdate }
        return decision.forced ? candidates[index].forcedUpdate : candidates[index].update
    }

    /// The chosen candidate's index (nil: no update) and whether the update is forced. Pure.
    func decide(versionCode: Int64, subject: String?) -> (candidate: Int?, forced: Bool) {
        let forced = requiredVersionCode.map { versionCode < $0 } ?? false
        for (index, candidate) in candidates.enumerated() {
            // Newest first: once a release is not above the caller, no older one is.
            if candidate.versionCode <= versionCode { break }
            guard
                RolloutBucket.isOffered(
                    appId: appId, releaseId: candidate.releaseId,
                    rolloutPercent: candidate.rolloutPercent, subject: subject)
            else { continue }
            if !forced || candidate.versionCode >= requiredVersionCode! { return (index, forced) }
            break // offered, but below the minimum: the forced caller gets the newest release instead
        }
        return forced ? (0, true) : (nil, false)
    }
}
