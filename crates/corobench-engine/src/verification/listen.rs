//! The `listen-addr` rule: a target told by `LISTEN_ADDR` to listen on
//! another loopback address answers there and not on 127.0.0.1. A target
//! that ignores it listens on loopback only, where no generator of another
//! host can reach it.

use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpStream};
use std::time::Duration;

use corobench_target::{BuiltTarget, LaunchOptions};
use corobench_verify::{Outcome, RuleResult};

/// Another loopback address: every Linux machine routes 127.0.0.0/8 to lo.
const ELSEWHERE: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));

/// How long the connection that must be refused may take to be refused.
const REFUSAL_TIMEOUT: Duration = Duration::from_secs(1);

/// Starts `built` a second time with `LISTEN_ADDR=127.0.0.2` and checks
/// where it answers; `options` are those of the first start.
pub fn listen_rule(built: &BuiltTarget, options: &LaunchOptions) -> RuleResult {
    let options = LaunchOptions {
        listen: Some(ELSEWHERE),
        work_dir: options.work_dir.as_ref().map(|dir| dir.join("listen-addr")),
        ..options.clone()
    };
    let outcome = match started_elsewhere(built, &options) {
        Ok(()) => Outcome::Pass,
        Err(message) => Outcome::Fail(format!("listen-addr: {message}")),
    };
    RuleResult {
        rule: "listen-addr",
        outcome,
    }
}

fn started_elsewhere(built: &BuiltTarget, options: &LaunchOptions) -> Result<(), String> {
    let mut running = built
        .launch(options)
        .map_err(|e| format!("told LISTEN_ADDR={ELSEWHERE}, it did not start: {e}"))?;
    running
        .wait_healthy(built.manifest.run.ready_timeout())
        .map_err(|e| format!("told LISTEN_ADDR={ELSEWHERE}, it never answered there: {e}"))?;
    let loopback = SocketAddr::from((Ipv4Addr::LOCALHOST, running.port()));
    let also_on_loopback = TcpStream::connect_timeout(&loopback, REFUSAL_TIMEOUT).is_ok();
    let _ = running.stop();
    if also_on_loopback {
        return Err(format!(
            "told LISTEN_ADDR={ELSEWHERE}, it also accepts connections on {loopback}: it listens \
             on every address (or on 127.0.0.1 beside the one it was told), not where it was told"
        ));
    }
    Ok(())
}
