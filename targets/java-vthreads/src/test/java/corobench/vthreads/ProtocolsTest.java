package corobench.vthreads;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.helidon.webserver.WebServer;
import io.helidon.webserver.WebServerConfig;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The protocol variables, and the endpoints served over TLS (h2 by ALPN, HTTP/1.1) and over h2c. */
class ProtocolsTest {
    private static final Path FIXTURES = Path.of("src/test/resources/tls");
    private static final Map<String, String> TLS_FILES = Map.of(
            "TLS_CERT", FIXTURES.resolve("chain.pem").toString(),
            "TLS_KEY", FIXTURES.resolve("key.pem").toString());

    @TempDir
    static Path dir;

    @Test
    void nothingSetIsCleartextHttp1() {
        Protocols protocols = Protocols.fromEnv(Map.of());
        assertEquals("http/1.1", protocols.http());
        assertFalse(protocols.tls());
        assertEquals("h2 over TLS", Protocols.fromEnv(with(TLS_FILES, "HTTP_PROTOCOL", "h2")).describe());
    }

    @Test
    void inconsistentVariablesAreRefusedNamingThem() {
        assertMessage("HTTP_PROTOCOL must be http/1.1, h2 or h2c, got \"h3\"", Map.of("HTTP_PROTOCOL", "h3"));
        assertMessage("TLS_CERT is set but TLS_KEY is not", Map.of("TLS_CERT", "/c.pem"));
        assertMessage("TLS_KEY is set but TLS_CERT is not", Map.of("TLS_KEY", "/k.pem"));
        assertMessage("HTTP_PROTOCOL=h2 is HTTP/2 over TLS", Map.of("HTTP_PROTOCOL", "h2"));
        assertMessage("HTTP_PROTOCOL=h2c is cleartext HTTP/2", with(TLS_FILES, "HTTP_PROTOCOL", "h2c"));
        Protocols missing = Protocols.fromEnv(Map.of("TLS_CERT", "/nonexistent.pem", "TLS_KEY", "/nonexistent.pem"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> missing.configure(WebServer.builder()));
        assertEquals("TLS_KEY /nonexistent.pem is not a readable file", e.getMessage());
    }

    @Test
    void httpsServesH2ByAlpnWithStreamsRunningConcurrently() throws Exception {
        WebServer server = serve(with(TLS_FILES, "HTTP_PROTOCOL", "h2"));
        try {
            HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_2).sslContext(trustingFixtureCa()).build();
            String base = "https://127.0.0.1:" + server.port();
            CompletableFuture<HttpResponse<String>> slow = client.sendAsync(get(base + "/io?ms=5000"),
                    HttpResponse.BodyHandlers.ofString());
            HttpResponse<String> fast = client.send(get(base + "/plaintext"), HttpResponse.BodyHandlers.ofString());
            assertFalse(slow.isDone(), "the slow stream ended before the fast one beside it");
            assertEquals(HttpClient.Version.HTTP_2, fast.version());
            assertEquals("Hello, World!", fast.body());
            assertEquals("java-vthreads", fast.headers().firstValue("server").orElseThrow());
            assertEquals("13", fast.headers().firstValue("content-length").orElseThrow());
            assertFalse(fast.headers().firstValue("connection").isPresent());
            slow.cancel(true);
        } finally {
            server.stop();
        }
    }

    @Test
    void httpsAgreesOnHttp1WhenOnlyThatIsOffered() throws Exception {
        WebServer server = serve(TLS_FILES);
        try (SSLSocket socket = (SSLSocket) trustingFixtureCa().getSocketFactory().createSocket("127.0.0.1", server.port())) {
            SSLParameters parameters = socket.getSSLParameters();
            parameters.setApplicationProtocols(new String[] {"http/1.1"});
            socket.setSSLParameters(parameters);
            socket.startHandshake();
            assertEquals("http/1.1", socket.getApplicationProtocol());
            socket.getOutputStream().write("GET /json HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                    .getBytes(StandardCharsets.US_ASCII));
            String answer = new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(answer.startsWith("HTTP/1.1 200 OK\r\n"), answer);
            assertTrue(answer.endsWith("{\"message\":\"Hello, World!\"}"), answer);
        } finally {
            server.stop();
        }
    }

    @Test
    void cleartextServesH2c() throws Exception {
        WebServer server = serve(Map.of("HTTP_PROTOCOL", "h2c"));
        try {
            HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_2).build();
            HttpResponse<String> json = client.send(get("http://127.0.0.1:" + server.port() + "/json"),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(HttpClient.Version.HTTP_2, json.version());
            assertEquals("{\"message\":\"Hello, World!\"}", json.body());
        } finally {
            server.stop();
        }
    }

    private static WebServer serve(Map<String, String> env) {
        Endpoints endpoints = new Endpoints("java-vthreads", dir, dir, new Database(null, 1));
        WebServerConfig.Builder listener = WebServer.builder().host("127.0.0.1").port(0).routing(endpoints::routing);
        Protocols.fromEnv(env).configure(listener);
        return listener.build().start();
    }

    private static HttpRequest get(String url) {
        return HttpRequest.newBuilder(URI.create(url)).build();
    }

    private static SSLContext trustingFixtureCa() throws Exception {
        KeyStore trusted = KeyStore.getInstance(KeyStore.getDefaultType());
        trusted.load(null, null);
        try (InputStream ca = Files.newInputStream(FIXTURES.resolve("ca.pem"))) {
            trusted.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(ca));
        }
        TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trust.init(trusted);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, trust.getTrustManagers(), null);
        return context;
    }

    private static Map<String, String> with(Map<String, String> base, String name, String value) {
        var env = new java.util.HashMap<>(base);
        env.put(name, value);
        return env;
    }

    private static void assertMessage(String start, Map<String, String> env) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Protocols.fromEnv(env));
        assertTrue(e.getMessage().startsWith(start), e.getMessage());
    }
}
