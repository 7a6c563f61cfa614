//! A Kubernetes layout over TLS (`tls`, `h2`): a throwaway authority and a
//! server certificate made for this one layout, in a Secret. The target
//! Pod mounts it read-only and `corobench serve --tls-dir` serves its
//! certificate; the generators mount the authority's certificate alone and
//! trust only it (`corobench load --ca`), as on one machine or on hosts.

use corobench_target::tls::{CA_FILE, CERT_FILE, KEY_FILE};
use serde_json::{Value, json};

use super::manifests::TARGET_NAME;
use crate::protocol::Certificates;

/// The Secret's name.
pub const TLS_SECRET: &str = "corobench-tls";
/// Where the target Pod and the generators mount it, read-only.
pub const TLS_DIR: &str = "/etc/corobench/tls";
/// What the Secret holds, said on it (an annotation) and by `k8s render`.
pub const THROWAWAY_NOTE: &str = "a throwaway certificate authority and server key, made by \
    corobench k8s render for this trial alone and trusted by nothing else: private material, \
    to delete with the trial";
/// The annotation that carries [`THROWAWAY_NOTE`].
const NOTE_ANNOTATION: &str = "corobench.dev/note";
/// The pods' volume of the Secret.
const VOLUME: &str = "tls";
/// The keys of a `kubernetes.io/tls` Secret, and the authority's by the
/// same convention (cert-manager's).
const CERT_KEY: &str = "tls.crt";
const KEY_KEY: &str = "tls.key";
const CA_KEY: &str = "ca.crt";
/// Owner read-only: the key is private, and the image runs as root.
const KEY_MODE: u32 = 0o400;

/// The names the target's certificate is good for besides loopback: the
/// Service's name as the generators write it, and its longer forms in
/// `namespace` (with the default cluster domain), so that a client that
/// writes any of them checks the certificate as it is.
#[must_use]
pub fn service_names(namespace: &str) -> Vec<String> {
    vec![
        TARGET_NAME.to_owned(),
        format!("{TARGET_NAME}.{namespace}"),
        format!("{TARGET_NAME}.{namespace}.svc"),
        format!("{TARGET_NAME}.{namespace}.svc.cluster.local"),
    ]
}

/// The authority's certificate in the generators' mount: their `--ca`.
#[must_use]
pub fn ca_path() -> String {
    format!("{TLS_DIR}/{CA_FILE}")
}

/// The Secret with `metadata` (the layout's, the note added), the leaf and
/// its key under the `kubernetes.io/tls` keys, the authority beside them;
/// as `stringData`, so that the PEM text reads as it is.
pub(super) fn secret(mut metadata: Value, certificates: &Certificates) -> Value {
    metadata["annotations"][NOTE_ANNOTATION] = json!(THROWAWAY_NOTE);
    json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": metadata,
        "type": "kubernetes.io/tls",
        "stringData": {
            CERT_KEY: certificates.cert,
            KEY_KEY: certificates.key,
            CA_KEY: certificates.ca,
        },
    })
}

/// The target Pod's volume: the whole Secret, under the file names
/// `corobench serve --tls-dir` reads, readable by its owner alone.
pub(super) fn target_volume() -> Value {
    json!({
        "name": VOLUME,
        "secret": {
            "secretName": TLS_SECRET,
            "defaultMode": KEY_MODE,
            "items": [
                { "key": CERT_KEY, "path": CERT_FILE },
                { "key": KEY_KEY, "path": KEY_FILE },
                { "key": CA_KEY, "path": CA_FILE },
            ],
        },
    })
}

/// A generator pod's volume: the authority's certificate alone, never the key.
pub(super) fn generator_volume() -> Value {
    json!({
        "name": VOLUME,
        "secret": {
            "secretName": TLS_SECRET,
            "items": [{ "key": CA_KEY, "path": CA_FILE }],
        },
    })
}

/// The mount of either volume, read-only.
pub(super) fn mount() -> Value {
    json!({ "name": VOLUME, "mountPath": TLS_DIR, "readOnly": true })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_certificate_names_the_service_in_every_form() {
        assert_eq!(
            service_names("bench"),
            [
                "corobench-target",
                "corobench-target.bench",
                "corobench-target.bench.svc",
                "corobench-target.bench.svc.cluster.local"
            ]
        );
        assert_eq!(ca_path(), "/etc/corobench/tls/ca.pem");
    }

    #[test]
    fn the_generators_get_the_authority_and_never_the_key() {
        let volume = generator_volume();
        let items = volume["secret"]["items"].as_array().unwrap();
        assert_eq!(items.len(), 1);
        assert_eq!(items[0], json!({ "key": "ca.crt", "path": "ca.pem" }));
        let target = target_volume();
        assert_eq!(target["secret"]["defaultMode"], 0o400);
        assert_eq!(target["secret"]["items"][1]["path"], "key.pem");
    }
}
