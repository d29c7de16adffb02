import ParleyAuth
import ParleyJSON

extension FilesModule {
    /// `files` of `GET /api/admin/stats`: what the app stores, from the usage counter the blob triggers keep
    /// (migrations/0016 and 0023): each content once, as the app's storage quota counts it.
    public var statisticsContributor: StatisticsContributor {
        let database = repository.database
        return StatisticsContributor("files") { appId in
            let row = try await database.query(
                "SELECT bytes, blobs FROM file_app_usage WHERE app_id = \(appId)"
            ).first
            return .object([
                "bytes": .number(JSONNumber(try row?.decode("bytes", as: Int64.self) ?? 0)),
                "count": .number(JSONNumber(try row?.decode("blobs", as: Int64.self) ?? 0)),
            ])
        }
    }
}
