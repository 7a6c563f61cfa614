//! A program on `[hosts]`: `corobench program` run to its end on the first
//! generator host over the transport, beside the server it talks to (when
//! it talks to one) served on the server host as a trial's server is; its
//! figures are stored as a local program trial's, and the server's
//! resources are `serve`'s samples taken while the program ran.

use corobench_model::ProgramResult;
use corobench_spec::PlannedScenario;

use super::session::{ServerSession, param_flags};
use super::{OnHosts, POLL, or_silent};
use crate::generator::server_url;
use crate::transport::Remote;
use crate::trial::Halt;

impl OnHosts<'_> {
    /// Runs the scenario's program on the first generator host, to its end.
    pub(super) fn program(
        &self,
        scenario: &PlannedScenario,
        mut server: Option<&mut ServerSession>,
    ) -> Result<ProgramResult, Halt> {
        let address = &self.hosts.hosts.server_address;
        let url = server.as_ref().map(|s| server_url(address, s.port, ""));
        let started_ms = unix_ms();
        let program = self.run_program_there(scenario, url, server.as_deref_mut());
        if let Some(server) = server {
            server.span_ms = (started_ms, unix_ms());
        }
        program
    }

    /// `corobench program` on the first generator host, to its end.
    fn run_program_there(
        &self,
        scenario: &PlannedScenario,
        server_url: Option<String>,
        mut server: Option<&mut ServerSession>,
    ) -> Result<ProgramResult, Halt> {
        let hosts = &self.hosts.hosts;
        let host = &hosts.generators[0];
        let mut argv = vec![
            self.hosts.generator_binaries[0].clone(),
            "program".to_owned(),
            scenario.target.clone(),
        ];
        argv.extend(param_flags(&scenario.parameters));
        if let Some(url) = server_url {
            argv.extend(["--server-url".to_owned(), url]);
        }
        if let Some(cpus) = &hosts.generator_cpus[0] {
            argv.extend(["--cpus".to_owned(), cpus.clone()]);
        }
        if let Some(dir) = &hosts.targets_dir {
            argv.extend(["--targets-dir".to_owned(), dir.clone()]);
        }
        let command = self.hosts.transport.command(host, &argv);
        let mut remote = Remote::start(command, false).map_err(|e| self.cannot_start(&e))?;
        let status = loop {
            if let Some(status) = remote.exited() {
                break status;
            }
            if self.stopped() {
                return Err(Halt::Interrupted);
            }
            if let Some(server) = server.as_deref_mut() {
                server.collect_samples();
                if server.ended().is_some() {
                    return Err(Halt::Failed(format!(
                        "the session with the server host {} ended while the program ran",
                        server.host
                    )));
                }
            }
            std::thread::sleep(POLL);
        };
        remote.finish_reading();
        let output = remote.drain_stdout();
        if !status.success() {
            return Err(Halt::Failed(format!(
                "the program on {} failed ({status}): {}",
                host.text,
                or_silent(&remote.stderr_tail())
            )));
        }
        let line = output
            .iter()
            .rev()
            .find(|l| l.trim_start().starts_with('{'));
        line.and_then(|l| serde_json::from_str(l).ok())
            .ok_or_else(|| {
                Halt::Failed(format!(
                    "corobench program on {} printed no figures: {}",
                    host.text,
                    or_silent(&output.join("\n"))
                ))
            })
    }
}

fn unix_ms() -> u64 {
    u64::try_from(crate::wall_clock::unix_ms()).unwrap_or(0)
}
