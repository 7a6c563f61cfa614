//! What identifies a user's server in a run's provenance: without a build
//! command its command line and executable, nothing else of its folder;
//! with one, its build inputs only (no results database, `target/`, hidden
//! folder or FIFO), large files by size and time.

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use corobench_target::{
    BuildCache, CONTENT_LIMIT_BYTES, Manifest, inline_servers, server_provenance, source_hash,
    source_identity,
};
use tempfile::TempDir;

/// A server `api` of a spec in `dir`, as `[servers.api]` says.
fn server(dir: &Path, table: &str) -> Manifest {
    let spec = format!(
        "targets = [\"api\"]\n[[workloads]]\nname = \"w\"\npath = \"/\"\n\n[servers.api]\n{table}"
    );
    let spec_path = dir.join("bench.toml");
    std::fs::write(&spec_path, &spec).unwrap();
    inline_servers(&spec, Some(&spec_path)).unwrap().remove(0)
}

fn executable(path: &Path, body: &str) {
    std::fs::write(path, body).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A server built from `main.go` in `dir` by a build command.
fn built_server(dir: &Path) -> Manifest {
    std::fs::write(dir.join("main.go"), "package main\n").unwrap();
    server(
        dir,
        "command = \"{out}/api --port {port}\"\nbuild = \"go build -o {out}/api .\"\n",
    )
}

/// What a results database looks like on disk: SQLite's header, then pages.
fn results_database(path: &Path, pages: usize) {
    let mut bytes = b"SQLite format 3\0".to_vec();
    bytes.resize(4096 * pages, 7);
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn without_a_build_a_server_is_its_command_line_and_its_executable() {
    let dir = TempDir::new().unwrap();
    executable(&dir.path().join("api"), "#!/bin/sh\necho v1\n");
    let manifest = server(dir.path(), "command = \"./api --port {port}\"\n");
    let first = source_hash(&manifest).unwrap();

    // A run stores its results beside the server: the same binary stays the
    // same server, whatever else its folder holds.
    results_database(&dir.path().join("corobench.db"), 4);
    std::fs::write(dir.path().join("corobench.db-wal"), b"frames").unwrap();
    std::fs::write(dir.path().join("notes.txt"), "anything").unwrap();
    assert_eq!(source_hash(&manifest).unwrap(), first);
    results_database(&dir.path().join("corobench.db"), 9);
    assert_eq!(source_hash(&manifest).unwrap(), first);

    executable(&dir.path().join("api"), "#!/bin/sh\necho v2\n");
    let rebuilt = source_hash(&manifest).unwrap();
    assert_ne!(rebuilt, first, "another executable is another server");
    let other = server(dir.path(), "command = \"./api --port {port} --fast\"\n");
    assert_ne!(
        source_hash(&other).unwrap(),
        rebuilt,
        "so is another command"
    );
}

#[test]
fn with_a_build_only_its_inputs_count() {
    let dir = TempDir::new().unwrap();
    let manifest = built_server(dir.path());
    let first = source_hash(&manifest).unwrap();

    results_database(&dir.path().join("results.sqlite"), 3);
    std::fs::write(dir.path().join("results.sqlite-journal"), b"journal").unwrap();
    for hidden in [".cache/go-build/x", ".idea/workspace.xml", ".env"] {
        let path = dir.path().join(hidden);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "not an input").unwrap();
    }
    std::fs::create_dir_all(dir.path().join("target")).unwrap();
    std::fs::write(dir.path().join("target/api"), "output").unwrap();
    assert_eq!(source_hash(&manifest).unwrap(), first);

    std::fs::write(dir.path().join("main.go"), "package main // changed\n").unwrap();
    assert_ne!(source_hash(&manifest).unwrap(), first, "a source changed");
}

#[test]
fn a_fifo_in_the_folder_is_never_opened() {
    let dir = TempDir::new().unwrap();
    let manifest = built_server(dir.path());
    let first = source_hash(&manifest).unwrap();
    let fifo = dir.path().join("control.fifo");
    let path = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: `path` is a valid NUL-terminated path; mkfifo only creates it.
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
    // Opening a FIFO with no writer would block for ever: this returns.
    assert_eq!(source_hash(&manifest).unwrap(), first);
}

/// Issue "hostile input, third round", hang 1: a socket in the folder
/// failed the run as "build failed"; a FIFO named like a database's journal
/// (`x-wal` beside a FIFO `x`) was opened to look for SQLite's header.
#[test]
fn a_socket_and_a_fifo_beside_a_journal_are_never_opened() {
    let dir = TempDir::new().unwrap();
    let manifest = built_server(dir.path());
    let first = source_hash(&manifest).unwrap();
    let _socket = std::os::unix::net::UnixListener::bind(dir.path().join("admin.sock")).unwrap();
    let fifo = dir.path().join("queue");
    let path = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: `path` is a valid NUL-terminated path; mkfifo only creates it.
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
    std::fs::write(dir.path().join("queue-wal"), "not a journal").unwrap();
    let changed = source_hash(&manifest).unwrap();
    assert_ne!(changed, first, "queue-wal is a regular file of the folder");
    std::fs::remove_file(dir.path().join("queue-wal")).unwrap();
    assert_eq!(source_hash(&manifest).unwrap(), first);
}

/// A command whose program is a FIFO is not read for its digest.
#[test]
fn an_executable_that_is_a_fifo_is_never_read() {
    let fifo = TempDir::new().unwrap();
    let path = fifo.path().join("server");
    let name = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: `name` is a valid NUL-terminated path; mkfifo only creates it.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o700) }, 0);
    let error = corobench_target::file_digest(&path).unwrap_err();
    assert!(error.to_string().contains("not a regular file"), "{error}");
}

#[test]
fn a_file_beyond_the_limit_counts_by_size_and_time_not_content() {
    let dir = TempDir::new().unwrap();
    let manifest = built_server(dir.path());
    let data = dir.path().join("data.bin");
    let file = std::fs::File::create(&data).unwrap();
    file.set_len(CONTENT_LIMIT_BYTES + 1).unwrap();
    let first = source_hash(&manifest).unwrap();
    file.set_len(CONTENT_LIMIT_BYTES + 2).unwrap();
    assert_ne!(source_hash(&manifest).unwrap(), first, "its size changed");
}

/// Bytes this thread has read through read(2) and its kin so far, page
/// cache or not (`rchar` of /proc/thread-self/io): what hashing costs,
/// apart from whatever other tests of this binary read at the same time.
fn bytes_read_by_this_thread() -> u64 {
    let io = std::fs::read_to_string("/proc/thread-self/io").unwrap();
    io.lines()
        .find_map(|line| line.strip_prefix("rchar:"))
        .and_then(|value| value.trim().parse().ok())
        .expect("rchar in /proc/thread-self/io")
}

/// 3 GiB: the file of the issue, sparse so that it takes no disk.
const THREE_GIB: u64 = 3 << 30;

/// A sparse file of `bytes` at `path`.
fn sparse(path: &Path, bytes: u64) {
    std::fs::File::create(path).unwrap().set_len(bytes).unwrap();
}

/// Issue "hostile input, third round", hang 1: a 3 GB file in a server's
/// working folder cost 9 s of hashing on every run. A server without a
/// build is its command line and executable: nothing of the file is read.
#[test]
fn a_huge_file_beside_a_server_without_a_build_is_not_read() {
    let dir = TempDir::new().unwrap();
    executable(&dir.path().join("api"), "#!/bin/sh\necho v1\n");
    let manifest = server(dir.path(), "command = \"./api --port {port}\"\n");
    sparse(&dir.path().join("dump.bin"), THREE_GIB);
    let before = bytes_read_by_this_thread();
    let identity = source_identity(&manifest).unwrap();
    let read = bytes_read_by_this_thread() - before;
    assert!(read < 1 << 20, "{read} bytes read");
    assert!(identity.unread.is_empty(), "{:?}", identity.unread);
}

/// The same file among a build's inputs is counted by size and time, no
/// more than the stated limit is read, and the run's provenance says
/// which file was not read and why.
#[test]
fn a_huge_input_of_a_build_is_read_no_further_than_the_limit_and_said() {
    let dir = TempDir::new().unwrap();
    let manifest = server(
        dir.path(),
        "command = \"{out}/api --port {port}\"\nbuild = \"true\"\n",
    );
    std::fs::write(dir.path().join("main.go"), "package main\n").unwrap();
    sparse(&dir.path().join("dump.bin"), THREE_GIB);
    let before = bytes_read_by_this_thread();
    let identity = source_identity(&manifest).unwrap();
    let read = bytes_read_by_this_thread() - before;
    assert!(read <= CONTENT_LIMIT_BYTES, "{read} bytes read");
    assert_eq!(identity.unread, vec![("dump.bin".to_owned(), THREE_GIB)]);
    assert_eq!(identity.hash, source_hash(&manifest).unwrap());

    let elsewhere = TempDir::new().unwrap();
    let cache = BuildCache::new(elsewhere.path().join("cache"));
    let built = cache
        .build(&manifest, &elsewhere.path().join("build.log"))
        .unwrap();
    assert_eq!(built.unread_sources, identity.unread);
    let provenance = server_provenance(&built);
    let (_, note) = provenance
        .iter()
        .find(|(key, _)| key == "api sources")
        .unwrap_or_else(|| panic!("no note of what was not read: {provenance:?}"));
    assert_eq!(
        note,
        "dump.bin (3072 MiB) counted by size and modification time, not content: files over \
         32 MiB are not read when the sources are hashed"
    );
}
