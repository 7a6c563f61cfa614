//! A server the test starts itself, as a user does before measuring it.

/// The knob server started by the test itself, in its own process group,
/// as a user starts a server before measuring it; killed and reaped on drop.
#[derive(Debug)]
pub struct AlreadyRunning {
    pub child: std::process::Child,
    pub url: String,
}

impl AlreadyRunning {
    #[must_use]
    pub fn start() -> Self {
        use std::io::BufRead as _;
        use std::os::unix::process::CommandExt as _;
        let mut child = std::process::Command::new(corobench_testkit::binary_path())
            .arg("knobs")
            .env("PORT", "0")
            .process_group(0)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let addr = line.trim().trim_start_matches("listening on ").to_owned();
        Self {
            child,
            url: format!("http://{addr}"),
        }
    }

    pub fn still_running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }
}

impl Drop for AlreadyRunning {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
