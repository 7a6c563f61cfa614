package corobench.vthreads;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.helidon.webserver.WebServer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The endpoints served in-process by Helidon, checked over raw sockets. */
class EndpointsTest {
    @TempDir
    static Path dataDir;

    @TempDir
    static Path uploadDir;

    private static WebServer server;

    record Answer(int status, Map<String, String> headers, byte[] body) {
        String text() {
            return new String(body, StandardCharsets.UTF_8);
        }
    }

    @BeforeAll
    static void start() throws IOException {
        byte[] payload = new byte[64 * 1024];
        for (int i = 0; i < payload.length; i++) {
            payload[i] = (byte) (i % 251);
        }
        Files.write(dataDir.resolve("payload.bin"), payload);
        server = serve(dataDir);
    }

    /** The endpoints, without a database, serving files from {@code data}, on a free port. */
    private static WebServer serve(Path data) {
        Endpoints endpoints = new Endpoints("java-vthreads", data, uploadDir, new Database(null, 1));
        return WebServer.builder().host("127.0.0.1").port(0).routing(endpoints::routing).build().start();
    }

    @AfterAll
    static void stop() {
        server.stop();
    }

    @Test
    void everyAnswerCarriesTheContractsHeaders() throws IOException {
        for (String request : new String[] {get("/plaintext"), get("/nope"), get("/io?ms=x")}) {
            Answer answer = exchange(request).get(0);
            assertEquals("java-vthreads", answer.headers().get("server"));
            assertTrue(answer.headers().get("date").matches("\\w{3}, \\d{2} \\w{3} \\d{4} \\d{2}:\\d{2}:\\d{2} GMT"));
            assertEquals(String.valueOf(answer.body().length), answer.headers().get("content-length"));
            assertTrue(answer.headers().containsKey("content-type"));
        }
    }

    @Test
    void endpointsAnswerTheirBodies() throws IOException {
        assertEquals("Hello, World!", exchange(get("/plaintext")).get(0).text());
        assertEquals("{\"message\":\"Hello, World!\"}", exchange(get("/json")).get(0).text());
        assertEquals("{\"message\":\"Hello, World!\",\"waited_ms\":0}", exchange(get("/io?ms=0")).get(0).text());
        assertEquals("{\"digest\":\"66687aadf862bd776c8fc18b8e9f8e20089714856ee233b3902a591d0d5f2925\",\"iters\":1,\"waited_ms\":0}",
                exchange(get("/mixed?iters=1&ms=0")).get(0).text());
        byte[] file = exchange(get("/file?kb=2")).get(0).body();
        assertEquals(2048, file.length);
        assertEquals((byte) (300 % 251), file[300]);
        assertTrue(exchange(get("/stats")).get(0).text().startsWith("{\"model\":\"virtual-threads\",\"threads\":"));
    }

    @Test
    void errorsAreJsonThatNamesTheProblem() throws IOException {
        Answer notFound = exchange(get("/nope")).get(0);
        assertEquals(404, notFound.status());
        assertEquals("{\"error\":\"no such path: /nope\"}", notFound.text());
        Answer wrongMethod = exchange("POST /plaintext HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n").get(0);
        assertEquals(405, wrongMethod.status());
        assertEquals("GET", wrongMethod.headers().get("allow"));
        Answer badParameter = exchange(get("/file?kb=0")).get(0);
        assertEquals(400, badParameter.status());
        assertEquals("{\"error\":\"kb must be an integer in 1..=10240\"}", badParameter.text());
        assertEquals("application/json", badParameter.headers().get("content-type"));
        Answer noDatabase = exchange(get("/db")).get(0);
        assertEquals(503, noDatabase.status());
        assertEquals("{\"error\":\"no database: DATABASE_URL is not set\"}", noDatabase.text());
    }

    @Test
    void pipelinedRequestsAreAnsweredInOrder() throws IOException {
        var answers = exchange(get("/io?ms=50") + get("/plaintext") + get("/json"));
        assertEquals("{\"message\":\"Hello, World!\",\"waited_ms\":50}", answers.get(0).text());
        assertEquals("Hello, World!", answers.get(1).text());
        assertEquals("{\"message\":\"Hello, World!\"}", answers.get(2).text());
    }

    @Test
    void uploadsAreHashedWholeAndTheirFilesRemoved() throws Exception {
        byte[] body = new byte[300_000];
        for (int i = 0; i < body.length; i++) {
            body[i] = (byte) (i * 7);
        }
        String head = "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: " + body.length + "\r\n\r\n";
        Answer answer = exchange(head.getBytes(StandardCharsets.US_ASCII), body).get(0);
        String sha256 = HexFormat.of().formatHex(Contract.sha256().digest(body));
        assertEquals("{\"bytes\":300000,\"sha256\":\"" + sha256 + "\"}", answer.text());
        try (var left = Files.list(uploadDir)) {
            assertEquals(0, left.count());
        }
    }

    @Test
    void anOversizedUploadIsRefusedBeforeItsBody() throws IOException {
        String head = "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: " + (Contract.MAX_UPLOAD_BYTES + 1) + "\r\n\r\n";
        Answer answer = exchange(head).get(0);
        assertEquals(413, answer.status());
        assertEquals("{\"error\":\"the body must be at most 67108864 bytes\"}", answer.text());
    }

    @Test
    void connectionCloseIsHonouredAfterTheAnswer() throws IOException {
        try (Socket socket = new Socket("127.0.0.1", server.port())) {
            socket.setSoTimeout(10_000);
            socket.getOutputStream().write(
                    "GET /plaintext HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            InputStream in = socket.getInputStream();
            assertEquals("Hello, World!", readAnswer(in).text());
            assertEquals(-1, in.read(), "the server must close the connection after answering");
        }
    }

    @Test
    void anUnexpectedFailureIsAJson500(@TempDir Path emptyDataDir) throws IOException {
        WebServer other = serve(emptyDataDir);
        try {
            Answer answer = exchangeWith(other, get("/file?kb=1").getBytes(StandardCharsets.US_ASCII)).get(0);
            assertEquals(500, answer.status());
            assertEquals("application/json", answer.headers().get("content-type"));
            assertTrue(answer.text().startsWith("{\"error\":\"internal error: "), answer.text());
        } finally {
            other.stop();
        }
    }

    private static String get(String target) {
        return "GET " + target + " HTTP/1.1\r\nHost: x\r\n\r\n";
    }

    private static java.util.List<Answer> exchange(String requests) throws IOException {
        return exchange(requests.getBytes(StandardCharsets.US_ASCII));
    }

    /** Writes the bytes, then reads one answer per request line in them. */
    private static java.util.List<Answer> exchange(byte[]... parts) throws IOException {
        return exchangeWith(server, parts);
    }

    /** Sends the parts on one connection to {@code target} and reads an answer per request in them. */
    private static java.util.List<Answer> exchangeWith(WebServer target, byte[]... parts) throws IOException {
        int requests = 0;
        for (byte[] part : parts) {
            Matcher m = Pattern.compile("(?m)^(GET|POST) ").matcher(new String(part, StandardCharsets.ISO_8859_1));
            while (m.find()) {
                requests++;
            }
        }
        try (Socket socket = new Socket("127.0.0.1", target.port())) {
            socket.setSoTimeout(10_000);
            OutputStream out = socket.getOutputStream();
            for (byte[] part : parts) {
                out.write(part);
            }
            out.flush();
            InputStream in = socket.getInputStream();
            var answers = new java.util.ArrayList<Answer>();
            for (int i = 0; i < requests; i++) {
                answers.add(readAnswer(in));
            }
            return answers;
        }
    }

    private static Answer readAnswer(InputStream in) throws IOException {
        String statusLine = readLine(in);
        int status = Integer.parseInt(statusLine.split(" ")[1]);
        Map<String, String> headers = new HashMap<>();
        for (String line; !(line = readLine(in)).isEmpty(); ) {
            int colon = line.indexOf(':');
            headers.put(line.substring(0, colon).trim().toLowerCase(Locale.ROOT), line.substring(colon + 1).trim());
        }
        byte[] body = in.readNBytes(Integer.parseInt(headers.getOrDefault("content-length", "0")));
        return new Answer(status, headers, body);
    }

    private static String readLine(InputStream in) throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        for (int b; (b = in.read()) != '\n'; ) {
            if (b < 0) {
                throw new IOException("connection closed mid-answer");
            }
            if (b != '\r') {
                line.write(b);
            }
        }
        return line.toString(StandardCharsets.ISO_8859_1);
    }
}
