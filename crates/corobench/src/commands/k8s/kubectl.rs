//! `kubectl`, run as the user runs it (their kubeconfig, their context,
//! their credentials): corobench holds no cluster credentials of its own.

use std::io::Write as _;
use std::process::{Command, Stdio};

use corobench_engine::transport;
use serde_json::Value;

use crate::exit;

/// How long `kubectl cluster-info` may take to say whether the API server answers.
const REACHABLE_TIMEOUT: &str = "10s";

/// One kubectl context and namespace, and the container commands run in.
#[derive(Debug)]
pub struct Kubectl {
    transport: transport::Kubectl,
}

impl Kubectl {
    #[must_use]
    pub fn new(context: Option<String>, namespace: String, container: &str) -> Self {
        Self {
            transport: transport::Kubectl {
                context,
                namespace,
                container: container.to_string(),
            },
        }
    }

    /// The transport that runs commands in this namespace's pods.
    #[must_use]
    pub fn transport(&self) -> transport::Kubectl {
        self.transport.clone()
    }

    /// The context kubectl will use, by name, for messages.
    #[must_use]
    pub fn context_name(&self) -> String {
        if let Some(context) = &self.transport.context {
            return context.clone();
        }
        match Command::new("kubectl")
            .args(["config", "current-context"])
            .output()
        {
            Ok(out) if out.status.success() => {
                String::from_utf8_lossy(&out.stdout).trim().to_string()
            }
            _ => "(none: kubectl has no current context)".to_string(),
        }
    }

    /// Fails unless the context's API server answers.
    ///
    /// # Errors
    /// kubectl missing, or the cluster unreachable: the message names the
    /// context tried and how to choose another (exit 3).
    pub fn check_reachable(&self) -> anyhow::Result<()> {
        let context = self.context_name();
        let output = self
            .command(&["cluster-info", "--request-timeout", REACHABLE_TIMEOUT])
            .output()
            .map_err(|e| {
                exit::usage(format!(
                    "cannot run kubectl ({e}): install it and make sure it is on PATH"
                ))
            })?;
        if output.status.success() {
            return Ok(());
        }
        let stderr = String::from_utf8_lossy(&output.stderr);
        let said = stderr
            .lines()
            .rfind(|line| !line.trim().is_empty())
            .unwrap_or("(kubectl said nothing)");
        Err(exit::target_failed(format!(
            "no Kubernetes cluster reachable through kubectl context {context:?}: \
             `kubectl cluster-info` failed: {said}\nhint: check `kubectl config get-contexts` \
             and pick a reachable one with --context NAME (or `kubectl config use-context`)"
        )))
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = self.transport.base();
        command.args(args);
        command
    }

    /// Runs kubectl with `args` (and `stdin`, if any) and returns its stdout.
    ///
    /// # Errors
    /// kubectl could not run or failed; the message carries its stderr.
    pub fn run(&self, args: &[&str], stdin: Option<&[u8]>) -> anyhow::Result<String> {
        let mut command = self.command(args);
        command
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let shown = format!("kubectl {}", args.join(" "));
        let mut child = command
            .spawn()
            .map_err(|e| anyhow::anyhow!("cannot run {shown}: {e}"))?;
        if let (Some(input), Some(mut pipe)) = (stdin, child.stdin.take()) {
            pipe.write_all(input)
                .map_err(|e| anyhow::anyhow!("cannot write to {shown}: {e}"))?;
        }
        let output = child
            .wait_with_output()
            .map_err(|e| anyhow::anyhow!("cannot wait for {shown}: {e}"))?;
        if !output.status.success() {
            anyhow::bail!(
                "{shown} failed ({}): {}",
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            );
        }
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    }

    /// `kubectl apply -f -` of one object or List.
    ///
    /// # Errors
    /// As [`Self::run`].
    pub fn apply(&self, objects: &Value) -> anyhow::Result<()> {
        self.run(&["apply", "-f", "-"], Some(objects.to_string().as_bytes()))
            .map(drop)
    }

    /// `kubectl get … -o json`, parsed.
    ///
    /// # Errors
    /// As [`Self::run`], or output that is not JSON.
    pub fn get_json(&self, args: &[&str]) -> anyhow::Result<Value> {
        let mut all = vec!["get"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["-o", "json"]);
        let text = self.run(&all, None)?;
        serde_json::from_str(&text)
            .map_err(|e| anyhow::anyhow!("kubectl {} printed no JSON: {e}", all.join(" ")))
    }
}
