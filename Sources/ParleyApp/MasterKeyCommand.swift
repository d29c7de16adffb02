import ParleyAuth
import ParleyPush

/// `parley rotate-master-key`: reseals every stored secret (app secrets, APNs keys, FCM and HMS secrets) that
/// `PARLEY_PREVIOUS_MASTER_KEY` sealed under `PARLEY_MASTER_KEY`. Keys come from the environment, never from the
/// command line (which other users of the machine can read). Safe to run again: values already under the current
/// key are left alone.
public enum MasterKeyCommand {
    public static let usage = """
          parley rotate-master-key   reseal stored secrets under PARLEY_MASTER_KEY (the new key) that
                                     PARLEY_PREVIOUS_MASTER_KEY (the old one) sealed; see README "Rotating the
                                     master key"
        """

    /// Some value opens under neither key: nothing was changed.
    public struct Refused: Error, CustomStringConvertible {
        public let description: String
    }

    public static func run(
        _ arguments: [String], configuration: Configuration, output: @escaping (String) -> Void
    ) async throws {
        guard arguments.isEmpty else {
            throw AppCommand.UsageError(description: "rotate-master-key takes no arguments\n" + usage)
        }
        let auth = try configuration.authConfiguration()
        guard let previous = auth.previousMasterKey else {
            throw AppCommand.UsageError(
                description: "rotate-master-key needs PARLEY_PREVIOUS_MASTER_KEY (the old key) beside "
                    + "PARLEY_MASTER_KEY (the new one)")
        }
        guard previous.bytes != auth.masterKey.bytes else {
            throw AppCommand.UsageError(description: "PARLEY_PREVIOUS_MASTER_KEY equals PARLEY_MASTER_KEY")
        }
        do {
            try await reseal(configuration: configuration, sealer: auth.sealer, output: output)
        } catch let error as UnreadableSecrets {
            throw Refused(description: error.description)
        }
    }

    static func reseal(
        configuration: Configuration, sealer: MasterKeySealer, output: @escaping (String) -> Void
    ) async throws {
        try await CommandContext.with(configuration) { context in
            try await context.requireSchema()
            let secrets = try await AppRepository(database: context.database)
                .resealSecrets(with: AppSecretBox(sealer: sealer))
            output("app secrets: \(secrets.resealed) resealed, \(secrets.alreadyCurrent) already under the new key")
            let keys = try await PushSettingsRepository(database: context.database)
                .resealKeys(with: PushKeyBox(sealer: sealer))
            output("APNs keys: \(keys.resealed) resealed, \(keys.alreadyCurrent) already under the new key")
            let vendorSecrets = try await PushVendorSettingsRepository(database: context.database)
                .resealSecrets(with: PushKeyBox(sealer: sealer))
            output(
                "FCM and HMS secrets: \(vendorSecrets.resealed) resealed, \(vendorSecrets.alreadyCurrent) already "
                    + "under the new key")
        }
    }
}
