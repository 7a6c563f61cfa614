package corobench.vthreads;

import io.helidon.common.configurable.Resource;
import io.helidon.common.pki.Keys;
import io.helidon.webserver.WebServerConfig;
import io.helidon.webserver.http1.Http1Config;
import io.helidon.webserver.http2.Http2Config;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;

/**
 * What the listener speaks (docs/contract.md, "Protocols"): {@code HTTP_PROTOCOL}
 * ({@code http/1.1}, {@code h2} over TLS, {@code h2c} in cleartext) and HTTPS
 * when {@code TLS_CERT} and {@code TLS_KEY} name the PEM chain and key.
 */
record Protocols(String http, Optional<Path> cert, Optional<Path> key) {
    static final String HTTP1 = "http/1.1";

    /** Reads and checks the variables; the message names the variable and the fix. */
    static Protocols fromEnv(Map<String, String> env) {
        String http = Optional.ofNullable(env.get("HTTP_PROTOCOL")).map(String::strip)
                .filter(v -> !v.isEmpty()).orElse(HTTP1);
        if (!http.equals(HTTP1) && !http.equals("h2") && !http.equals("h2c")) {
            throw new IllegalArgumentException("HTTP_PROTOCOL must be http/1.1, h2 or h2c, got \"" + http + "\"");
        }
        Optional<Path> cert = path(env, "TLS_CERT");
        Optional<Path> key = path(env, "TLS_KEY");
        if (cert.isPresent() != key.isPresent()) {
            String set = cert.isPresent() ? "TLS_CERT" : "TLS_KEY";
            String unset = cert.isPresent() ? "TLS_KEY" : "TLS_CERT";
            throw new IllegalArgumentException(
                    set + " is set but " + unset + " is not: set both (PEM files) to serve HTTPS, or neither");
        }
        if (http.equals("h2") && cert.isEmpty()) {
            throw new IllegalArgumentException(
                    "HTTP_PROTOCOL=h2 is HTTP/2 over TLS: set TLS_CERT and TLS_KEY, or ask for h2c");
        }
        if (http.equals("h2c") && cert.isPresent()) {
            throw new IllegalArgumentException(
                    "HTTP_PROTOCOL=h2c is cleartext HTTP/2: unset TLS_CERT and TLS_KEY, or ask for h2");
        }
        return new Protocols(http, cert, key);
    }

    private static Optional<Path> path(Map<String, String> env, String name) {
        return Optional.ofNullable(env.get(name)).map(String::strip).filter(v -> !v.isEmpty()).map(Path::of);
    }

    boolean tls() {
        return cert.isPresent();
    }

    /** How the listener is described in the start-up line. */
    String describe() {
        return tls() ? http + " over TLS" : http;
    }

    /**
     * Gives the listener exactly the protocols asked for: HTTP/1.1 always (as
     * it was before HTTP/2 was on the class path: no connection preface check,
     * no h2c upgrader), HTTP/2 for h2 and h2c, and the TLS keys. Nagle's
     * algorithm is off, as Go and Node have it by default and the Rust targets
     * set it: HTTP/2 writes a response's
     * HEADERS and DATA frames apart, and with it on the DATA frame waits for
     * the client's delayed ACK (40 ms) whenever the HEADERS frame is still
     * unacknowledged; every stream then took 44 ms at 13-30% CPU.
     */
    void configure(WebServerConfig.Builder listener) {
        listener.connectionOptions(socket -> socket.tcpNoDelay(true));
        listener.protocolsDiscoverServices(false).addProtocol(Http1Config.create());
        if (!http.equals(HTTP1)) {
            listener.addProtocol(Http2Config.create());
        }
        if (tls()) {
            Keys keys = Keys.builder()
                    .pem(pem -> pem.key(resource("TLS_KEY", key.get())).certChain(resource("TLS_CERT", cert.get())))
                    .build();
            listener.tls(tls -> tls.privateKey(keys).privateKeyCertChain(keys));
        }
    }

    private static Resource resource(String variable, Path path) {
        if (!Files.isReadable(path)) {
            throw new IllegalArgumentException(variable + " " + path + " is not a readable file");
        }
        return Resource.create(path);
    }
}
