-- Push to Android phones (issue 21): an app's Firebase Cloud Messaging and Huawei Push Kit credentials, beside its
-- APNs settings in app_push_settings (whose `enabled` still turns the app's push on and off). Secrets are sealed
-- with AES-256-GCM under PARLEY_MASTER_KEY as the APNs key is, each with associated data naming the app and what it
-- is, so a sealed value copied onto another app's row or column does not open.
CREATE TABLE app_push_vendor_settings (
    app_id bigint PRIMARY KEY REFERENCES apps (id) ON DELETE CASCADE,
    -- FCM HTTP v1: the Firebase project, and the service-account JSON file whose key signs the OAuth assertions.
    fcm_project_id text,
    fcm_service_account_ciphertext bytea,
    -- NULL: Google's (https://fcm.googleapis.com, and the account file's token_uri). Tests point them at mocks.
    fcm_endpoint text,
    fcm_token_uri text,
    -- HMS Push Kit: the AppGallery Connect app id (the OAuth client id) and its client secret.
    hms_app_id text,
    hms_client_secret_ciphertext bytea,
    -- NULL: Huawei's (https://push-api.cloud.huawei.com, https://oauth-login.cloud.huawei.com).
    hms_endpoint text,
    hms_oauth_endpoint text,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    CHECK ((fcm_project_id IS NULL) = (fcm_service_account_ciphertext IS NULL)),
    CHECK ((hms_app_id IS NULL) = (hms_client_secret_ciphertext IS NULL))
);
