package corobench.vthreads;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.helidon.http.Header;
import io.helidon.http.HeaderNames;
import io.helidon.http.HeaderValues;
import io.helidon.http.Status;
import io.helidon.webserver.CloseConnectionException;
import io.helidon.webserver.http.FilterChain;
import io.helidon.webserver.http.HttpRouting;
import io.helidon.webserver.http.RoutingRequest;
import io.helidon.webserver.http.RoutingResponse;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The contract's endpoints. Helidon runs every handler on the virtual thread
 * that serves its connection, so each one is plain blocking code: a sleep,
 * a JDBC query or a file read parks that virtual thread and frees its
 * carrier for the others.
 */
final class Endpoints {
    private static final String TEXT = "text/plain; charset=utf-8";
    private static final String JSON = "application/json";
    private static final Header CONTENT_TEXT = HeaderValues.createCached(HeaderNames.CONTENT_TYPE, TEXT);
    private static final Header CONTENT_JSON = HeaderValues.createCached(HeaderNames.CONTENT_TYPE, JSON);
    private static final Header CONTENT_BYTES =
            HeaderValues.createCached(HeaderNames.CONTENT_TYPE, "application/octet-stream");
    private static final Header CONNECTION_CLOSE = HeaderValues.createCached(HeaderNames.CONNECTION, "close");
    private static final byte[] OK = "ok".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] HELLO = "Hello, World!".getBytes(StandardCharsets.US_ASCII);
    private static final int COPY_BUFFER = 64 * 1024;

    record Message(String message) {}

    record Waited(String message, int waited_ms) {}

    record Mixed(String digest, int iters, int waited_ms) {}

    record Uploaded(long bytes, String sha256) {}

    record Problem(String error) {}

    private final Header server;
    private final Path payload;
    private final Path uploadDir;
    private final Database database;
    private final ObjectMapper json = new ObjectMapper();
    private final HttpDate dates = new HttpDate();
    private final AtomicInteger inFlight = new AtomicInteger();
    /** Upload files being written, removed at exit if a stop cuts them short. */
    private final Set<Path> uploading = ConcurrentHashMap.newKeySet();

    Endpoints(String serverName, Path dataDir, Path uploadDir, Database database) {
        this.server = HeaderValues.createCached(HeaderNames.SERVER, serverName);
        this.payload = dataDir.resolve("payload.bin");
        this.uploadDir = uploadDir;
        this.database = database;
    }

    void routing(HttpRouting.Builder routing) {
        routing.addFilter(this::everyResponse)
                .get("/healthz", (req, res) -> send(res, Status.OK_200, CONTENT_TEXT, OK))
                .get("/plaintext", (req, res) -> send(res, Status.OK_200, CONTENT_TEXT, HELLO))
                .get("/json", (req, res) -> sendJson(res, new Message("Hello, World!")))
                .get("/io", this::io)
                .get("/db", this::db)
                .get("/file", this::file)
                .post("/upload", this::upload)
                .get("/mixed", this::mixed)
                .get("/stats", this::stats)
                .any(this::notRouted)
                .error(Contract.BadParameter.class, (req, res, e) -> error(res, Status.BAD_REQUEST_400, e.getMessage()))
                .error(Exception.class, this::internalError);
    }

    /** Anything a handler did not expect: a JSON 500, or a closed connection once the answer began. */
    private void internalError(ServerRequest req, ServerResponse res, Exception e) {
        if (res.isSent()) {
            throw new CloseConnectionException("the answer failed after it began", e);
        }
        System.err.println("java-vthreads: " + req.prologue().method().text() + " " + req.path().path() + " failed: " + e);
        error(res, Status.INTERNAL_SERVER_ERROR_500, "internal error: " + e);
    }

    /**
     * Every answer carries Server and Date; /stats counts requests in flight.
     * Helidon 4.5.0 answers `Connection: close` but then waits for another
     * request on the connection (helidon-io/helidon#12324, fixed after
     * 4.5.0): once the answer is out, the exception Helidon reserves for
     * closing a connection closes it.
     */
    private void everyResponse(FilterChain chain, RoutingRequest req, RoutingResponse res) {
        res.header(server);
        res.header(dates.header());
        inFlight.incrementAndGet();
        try {
            chain.proceed();
        } finally {
            inFlight.decrementAndGet();
        }
        if (res.headers().contains(CONNECTION_CLOSE) || asksToClose(req)) {
            throw new CloseConnectionException("the exchange asked to close the connection");
        }
    }

    private static boolean asksToClose(ServerRequest req) {
        return req.headers().first(HeaderNames.CONNECTION)
                .map(value -> value.toLowerCase(Locale.ROOT).contains("close"))
                .orElse(false);
    }

    private void io(ServerRequest req, ServerResponse res) throws InterruptedException {
        int ms = param(req, Contract.Param.MS);
        Thread.sleep(ms);
        sendJson(res, new Waited("Hello, World!", ms));
    }

    private void mixed(ServerRequest req, ServerResponse res) throws InterruptedException {
        int iters = param(req, Contract.Param.ITERS);
        int ms = param(req, Contract.Param.MS);
        String digest = Contract.digestChain(iters);
        Thread.sleep(ms);
        sendJson(res, new Mixed(digest, iters, ms));
    }

    private void db(ServerRequest req, ServerResponse res) {
        try {
            sendJson(res, database.randomWorld());
        } catch (Database.Unavailable e) {
            error(res, Status.SERVICE_UNAVAILABLE_503, e.getMessage());
        }
    }

    private void file(ServerRequest req, ServerResponse res) throws IOException {
        long length = param(req, Contract.Param.KB) * 1024L;
        try (InputStream in = Files.newInputStream(payload)) {
            long size = Files.size(payload);
            if (size < length) {
                error(res, Status.INTERNAL_SERVER_ERROR_500,
                        "payload.bin holds " + size + " bytes, fewer than kb asks for");
                return;
            }
            res.status(Status.OK_200);
            res.header(CONTENT_BYTES);
            res.contentLength(length);
            try (OutputStream out = res.outputStream()) {
                copy(in, out, length);
            }
        }
    }

    private void upload(ServerRequest req, ServerResponse res) throws IOException {
        OptionalLong declared = req.headers().contentLength();
        if (declared.isPresent() && declared.getAsLong() > Contract.MAX_UPLOAD_BYTES) {
            tooLarge(req, res);
            return;
        }
        Path temp = Files.createTempFile(uploadDir, "upload-", ".part");
        uploading.add(temp);
        try {
            MessageDigest sha256 = Contract.sha256();
            long total = 0;
            try (InputStream in = req.content().inputStream(); OutputStream out = Files.newOutputStream(temp)) {
                byte[] buffer = new byte[COPY_BUFFER];
                for (int n; (n = in.read(buffer)) > 0; ) {
                    total += n;
                    if (total > Contract.MAX_UPLOAD_BYTES) {
                        tooLarge(req, res);
                        return;
                    }
                    sha256.update(buffer, 0, n);
                    out.write(buffer, 0, n);
                }
            }
            sendJson(res, new Uploaded(total, HexFormat.of().formatHex(sha256.digest())));
        } finally {
            Files.deleteIfExists(temp);
            uploading.remove(temp);
        }
    }

    /** Removes the files of uploads still in flight (called as the JVM exits). */
    void removeUnfinishedUploads() {
        for (Path temp : uploading) {
            try {
                Files.deleteIfExists(temp);
            } catch (IOException e) {
                System.err.println("cannot remove the unfinished upload " + temp + ": " + e.getMessage());
            }
        }
    }

    private void stats(ServerRequest req, ServerResponse res) throws IOException {
        Map<String, Object> stats = new LinkedHashMap<>();
        stats.put("model", "virtual-threads");
        stats.put("threads", Contract.threadsFromStatus(Files.readString(Path.of("/proc/self/status"))));
        stats.put("tasks", inFlight.get());
        stats.put("heap_bytes", ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
        sendJson(res, stats);
    }

    /** Anything no route took: a wrong method on a known path, or an unknown path. */
    private void notRouted(ServerRequest req, ServerResponse res) {
        String path = req.path().path();
        String method = req.prologue().method().text();
        if (Contract.classify(method, path) == Contract.Verdict.NOT_FOUND) {
            error(res, Status.NOT_FOUND_404, "no such path: " + path);
            return;
        }
        String allowed = Contract.ROUTES.get(path);
        res.header(HeaderNames.ALLOW, allowed);
        error(res, Status.METHOD_NOT_ALLOWED_405, path + " answers " + allowed + " only");
    }

    private static int param(ServerRequest req, Contract.Param param) {
        var query = req.query();
        return param.parse(query.contains(param.name) ? query.get(param.name) : null);
    }

    /** HTTP/1.1 stops reading by closing the connection; HTTP/2 forbids the header and ends only the stream. */
    private void tooLarge(ServerRequest req, ServerResponse res) {
        if (req.prologue().protocolVersion().startsWith("1")) {
            res.header(CONNECTION_CLOSE);
        }
        error(res, Status.REQUEST_ENTITY_TOO_LARGE_413,
                "the body must be at most " + Contract.MAX_UPLOAD_BYTES + " bytes");
    }

    private void error(ServerResponse res, Status status, String message) {
        send(res, status, CONTENT_JSON, toJson(new Problem(message)));
    }

    private void sendJson(ServerResponse res, Object value) {
        send(res, Status.OK_200, CONTENT_JSON, toJson(value));
    }

    private static void send(ServerResponse res, Status status, Header contentType, byte[] body) {
        res.status(status);
        res.header(contentType);
        res.send(body);
    }

    private byte[] toJson(Object value) {
        try {
            return json.writeValueAsBytes(value);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void copy(InputStream in, OutputStream out, long length) throws IOException {
        byte[] buffer = new byte[COPY_BUFFER];
        long left = length;
        while (left > 0) {
            int n = in.read(buffer, 0, (int) Math.min(buffer.length, left));
            if (n < 0) {
                throw new IOException("payload.bin ended early");
            }
            out.write(buffer, 0, n);
            left -= n;
        }
    }
}
