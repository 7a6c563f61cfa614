import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The load of build.sh's training run: keep-alive GETs on the endpoints the
 * suites measure, so the JVM being trained records the classes and method
 * profiles the benchmark's requests use. Raw sockets, one platform thread per
 * connection, so nothing beyond the JDK is needed at build time.
 *
 *   Train free-port                                   prints a free port on 127.0.0.1
 *   Train PORT SERVER_PID SECONDS_PER_PATH CONNECTIONS PATH...
 *
 * Waits up to 30 s for /healthz (giving up at once if SERVER_PID exits), then
 * loads each PATH in turn. Exits 1 on a connection error, a 10 s silence or an
 * answer other than 200, so a broken server fails the build instead of
 * training a cache on error paths.
 */
public final class Train {
    private static final byte[] HEADER_END = {'\r', '\n', '\r', '\n'};

    public static void main(String[] args) throws Exception {
        if (args.length == 1 && args[0].equals("free-port")) {
            try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
                System.out.println(s.getLocalPort());
            }
            return;
        }
        int port = Integer.parseInt(args[0]);
        long serverPid = Long.parseLong(args[1]);
        long perPathNanos = Long.parseLong(args[2]) * 1_000_000_000L;
        int connections = Integer.parseInt(args[3]);
        List<String> paths = List.of(args).subList(4, args.length);

        waitHealthy(port, serverPid, System.nanoTime() + 30_000_000_000L);
        for (String path : paths) {
            AtomicLong answered = new AtomicLong();
            List<Throwable> failures = new ArrayList<>();
            long deadline = System.nanoTime() + perPathNanos;
            List<Thread> threads = new ArrayList<>();
            for (int i = 0; i < connections; i++) {
                threads.add(Thread.ofPlatform().start(() -> {
                    try {
                        answered.addAndGet(load(port, path, deadline));
                    } catch (IOException | RuntimeException e) {
                        synchronized (failures) {
                            failures.add(e);
                        }
                    }
                }));
            }
            for (Thread t : threads) {
                t.join();
            }
            if (!failures.isEmpty()) {
                System.err.println("training: GET " + path + " failed: " + failures.get(0));
                System.exit(1);
            }
            System.err.printf(Locale.ROOT, "training: GET %s answered %d times%n", path, answered.get());
        }
    }

    private static void waitHealthy(int port, long serverPid, long deadline) throws InterruptedException {
        while (true) {
            if (ProcessHandle.of(serverPid).map(p -> !p.isAlive()).orElse(true)) {
                System.err.println("training: the server (PID " + serverPid + ") exited before answering /healthz");
                System.exit(1);
            }
            try (Socket s = new Socket("127.0.0.1", port)) {
                s.setSoTimeout(10_000);
                if (get(s.getOutputStream(), new BufferedInputStream(s.getInputStream()), "/healthz") == 200) {
                    return;
                }
            } catch (IOException e) {
                // Not listening yet.
            }
            if (System.nanoTime() > deadline) {
                System.err.println("training: no answer from 127.0.0.1:" + port + "/healthz within 30 s");
                System.exit(1);
            }
            Thread.sleep(100);
        }
    }

    /** Requests `path` on one connection until the deadline; the number answered. */
    private static long load(int port, String path, long deadline) throws IOException {
        long n = 0;
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setTcpNoDelay(true);
            s.setSoTimeout(10_000);
            OutputStream out = s.getOutputStream();
            InputStream in = new BufferedInputStream(s.getInputStream());
            while (System.nanoTime() < deadline) {
                int status = get(out, in, path);
                if (status != 200) {
                    throw new IOException("status " + status);
                }
                n++;
            }
        }
        return n;
    }

    /** One keep-alive GET; reads the whole answer (Content-Length framed) and returns its status. */
    private static int get(OutputStream out, InputStream in, String path) throws IOException {
        out.write(("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        out.flush();
        StringBuilder head = new StringBuilder();
        int matched = 0;
        while (matched < HEADER_END.length) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("connection closed mid-answer");
            }
            head.append((char) b);
            matched = b == HEADER_END[matched] ? matched + 1 : (b == '\r' ? 1 : 0);
        }
        String[] lines = head.toString().split("\r\n");
        int status = Integer.parseInt(lines[0].split(" ")[1]);
        long length = -1;
        for (String line : lines) {
            int colon = line.indexOf(':');
            if (colon > 0 && line.substring(0, colon).trim().equalsIgnoreCase("content-length")) {
                length = Long.parseLong(line.substring(colon + 1).trim());
            }
        }
        if (length < 0) {
            throw new IOException("answer without Content-Length");
        }
        in.skipNBytes(length);
        return status;
    }
}
