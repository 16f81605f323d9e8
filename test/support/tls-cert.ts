/**
 * A self-signed certificate for `rebind.test` (EC P-256, valid until 2126), for tests that need a TLS server on
 * loopback: a client that trusts nothing refuses it, one given it as its CA accepts it for that name.
 */
export const TEST_TLS_NAME = 'rebind.test';

export const TEST_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgzqmm2P3c5XucME6a
zUGBZl38suQkPU72wtPYptTTGkGhRANCAAT+jfBOhrGlR6tQbpOpQavHGKrXDQ5L
QHHe9TC/gMJ+DXbsQLTd9tFX6kkakZ75qbmulBW185U+enwsVsCApaVK
-----END PRIVATE KEY-----`;

export const TEST_CERT = `-----BEGIN CERTIFICATE-----
MIIBmjCCAUGgAwIBAgIUN2r/dqnc5Dya7iXfbO+NzzoTX6kwCgYIKoZIzj0EAwIw
FjEUMBIGA1UEAwwLcmViaW5kLnRlc3QwIBcNMjYxMTIyMDEwNjI5WhgPMjEyNjEw
MjkwMTA2MjlaMBYxFDASBgNVBAMMC3JlYmluZC50ZXN0MFkwEwYHKoZIzj0CAQYI
KoZIzj0DAQcDQgAE/o3wToaxpUerUG6TqUGrxxiq1w0OS0Bx3vUwv4DCfg127EC0
3fbRV+pJGpGe+am5rpQVtfOVPnp8LFbAgKWlSqNrMGkwHQYDVR0OBBYEFOva0V/5
r1LyNVaOxHna9XUpzYs6MB8GA1UdIwQYMBaAFOva0V/5r1LyNVaOxHna9XUpzYs6
MA8GA1UdEwEB/wQFMAMBAf8wFgYDVR0RBA8wDYILcmViaW5kLnRlc3QwCgYIKoZI
zj0EAwIDRwAwRAIgbuAx6u78HOy2t9aZ/dm6ehRQJk+8FQOHPUksZBLG7i4CIBAG
zNTQBkVhq4NlKBURjdSYPIiCth9TCjESzsX7Umjc
-----END CERTIFICATE-----`;
