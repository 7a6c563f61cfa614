//! Pods as hosts: `kubectl exec -i` runs a command in a pod's container,
//! with the user's kubeconfig, context and credentials; `kubectl cp` copies
//! a file into it (the container needs `tar`, as for any `kubectl cp`).
//! A host's `host` is the pod's name. Closing the exec's stdin is the
//! remote end of file, which stops `corobench serve` as an SSH session's
//! end does.

use std::path::Path;
use std::process::Command;

use corobench_spec::HostAddress;

use super::Transport;

/// One namespace of one kubectl context, and the container of each pod
/// that commands run in.
#[derive(Clone, Debug)]
pub struct Kubectl {
    /// `--context`, or `None` for kubectl's current context.
    pub context: Option<String>,
    pub namespace: String,
    pub container: String,
}

impl Kubectl {
    /// `kubectl [--context C] --namespace NS`: the start of every command.
    #[must_use]
    pub fn base(&self) -> Command {
        let mut command = Command::new("kubectl");
        if let Some(context) = &self.context {
            command.arg("--context").arg(context);
        }
        command.arg("--namespace").arg(&self.namespace);
        command
    }
}

impl Transport for Kubectl {
    fn command(&self, host: &HostAddress, argv: &[String]) -> Command {
        let mut command = self.base();
        command
            .args(["exec", "-i", &host.host, "-c", &self.container, "--"])
            .args(argv);
        command
    }

    fn copy(&self, from: &Path, host: &HostAddress, to: &str) -> Command {
        let mut command = self.base();
        command
            .arg("cp")
            .arg("-c")
            .arg(&self.container)
            .arg(from)
            .arg(format!("{}/{}:{to}", self.namespace, host.host));
        command
    }

    fn client(&self) -> &'static str {
        "kubectl"
    }

    fn made_the_hosts(&self) -> bool {
        true
    }

    fn check_hint(&self, host: &HostAddress) -> String {
        let context = self
            .context
            .as_ref()
            .map(|c| format!(" --context {c}"))
            .unwrap_or_default();
        format!(
            "check with `kubectl{context} --namespace {} exec {} -c {} -- true`",
            self.namespace, host.host, self.container
        )
    }
}

/// The host of a pod: its name, written `pod/NAME` in messages.
#[must_use]
pub fn pod_host(name: &str) -> HostAddress {
    HostAddress {
        text: format!("pod/{name}"),
        user: None,
        host: name.to_string(),
        port: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(command: &Command) -> Vec<String> {
        std::iter::once(command.get_program())
            .chain(command.get_args())
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn exec_and_cp_name_the_context_namespace_pod_and_container() {
        let kubectl = Kubectl {
            context: Some("bench".into()),
            namespace: "perf".into(),
            container: "corobench".into(),
        };
        let pod = pod_host("corobench-server");
        let argv = ["corobench".to_string(), "serve".into(), "a b".into()];
        assert_eq!(
            words(&kubectl.command(&pod, &argv)),
            [
                "kubectl",
                "--context",
                "bench",
                "--namespace",
                "perf",
                "exec",
                "-i",
                "corobench-server",
                "-c",
                "corobench",
                "--",
                "corobench",
                "serve",
                "a b"
            ]
        );
        assert_eq!(
            words(&kubectl.copy(Path::new("/bin/x"), &pod, "/tmp/x")),
            [
                "kubectl",
                "--context",
                "bench",
                "--namespace",
                "perf",
                "cp",
                "-c",
                "corobench",
                "/bin/x",
                "perf/corobench-server:/tmp/x"
            ]
        );
        let current = Kubectl {
            context: None,
            ..kubectl
        };
        assert!(!words(&current.command(&pod, &argv)).contains(&"--context".to_string()));
    }
}
