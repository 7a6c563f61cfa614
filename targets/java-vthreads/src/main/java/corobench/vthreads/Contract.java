package corobench.vthreads;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The pure parts of the HTTP contract (docs/contract.md): the route table,
 * parameter parsing, the /mixed digest chain. No I/O here, so unit tests
 * check it without a server.
 */
final class Contract {
    static final long MAX_UPLOAD_BYTES = 64L * 1024 * 1024;
    static final int WORLD_ROWS = 10_000;

    /** A query parameter the contract knows: its range and its value when absent. */
    enum Param {
        MS("ms", 0, 10_000, 10),
        KB("kb", 1, 10_240, 1),
        ITERS("iters", 0, 1_000_000, 1_000);

        final String name;
        final int min;
        final int max;
        final int fallback;

        Param(String name, int min, int max, int fallback) {
            this.name = name;
            this.min = min;
            this.max = max;
            this.fallback = fallback;
        }

        /** The parameter's value from its raw query text (null when absent). */
        int parse(String raw) {
            if (raw == null) {
                return fallback;
            }
            if (!INTEGER.matcher(raw).matches()) {
                throw new BadParameter(this);
            }
            long value = Long.parseLong(raw);
            if (value < min || value > max) {
                throw new BadParameter(this);
            }
            return (int) value;
        }
    }

    /** A parameter that is not an integer in its range: a 400 naming it. */
    static final class BadParameter extends RuntimeException {
        private static final long serialVersionUID = 1L;

        BadParameter(Param param) {
            super(param.name + " must be an integer in " + param.min + "..=" + param.max, null, false, false);
        }
    }

    /** What a request for a method and path resolves to. */
    enum Verdict {
        OK,
        NOT_FOUND,
        METHOD_NOT_ALLOWED
    }

    /** Path to the one method it answers. */
    static final Map<String, String> ROUTES = Map.of(
            "/healthz", "GET",
            "/plaintext", "GET",
            "/json", "GET",
            "/io", "GET",
            "/db", "GET",
            "/file", "GET",
            "/upload", "POST",
            "/mixed", "GET",
            "/stats", "GET");

    private static final Pattern INTEGER = Pattern.compile("-?\\d{1,12}");
    private static final Pattern THREADS = Pattern.compile("(?m)^Threads:\\s+(\\d+)$");

    private Contract() {}

    static Verdict classify(String method, String path) {
        String allowed = ROUTES.get(path);
        if (allowed == null) {
            return Verdict.NOT_FOUND;
        }
        return allowed.equals(method) ? Verdict.OK : Verdict.METHOD_NOT_ALLOWED;
    }

    /** h0 = 32 zero bytes, h(k+1) = SHA-256(h(k)); the lower-case hex of h(iters). */
    static String digestChain(int iters) {
        MessageDigest sha256 = sha256();
        byte[] digest = new byte[32];
        for (int i = 0; i < iters; i++) {
            digest = sha256.digest(digest);
        }
        return HexFormat.of().formatHex(digest);
    }

    static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("this JDK has no SHA-256", e);
        }
    }

    /** Threads of this process from the text of /proc/self/status, or null. */
    static Integer threadsFromStatus(String status) {
        Matcher matcher = THREADS.matcher(status);
        return matcher.find() ? Integer.valueOf(matcher.group(1)) : null;
    }

    /**
     * A positive integer from the environment, or the fallback when unset;
     * anything else stops the server with a message naming the variable.
     */
    static int envInt(Map<String, String> env, String name, int fallback, int max) {
        String raw = env.get(name);
        if (raw == null || raw.isEmpty()) {
            return fallback;
        }
        int value = raw.matches("\\d{1,6}") ? Integer.parseInt(raw) : 0;
        if (value < 1 || value > max) {
            throw new IllegalArgumentException(
                    name + " must be an integer in 1..=" + max + ", got \"" + raw + "\"");
        }
        return value;
    }

    /**
     * LISTEN_ADDR: the IP address to listen on, 127.0.0.1 when unset; a
     * host name is refused (no lookup happens at start).
     */
    static String listenAddr(Map<String, String> env) {
        String raw = env.getOrDefault("LISTEN_ADDR", "").strip();
        if (raw.isEmpty()) {
            return "127.0.0.1";
        }
        String refusal = "LISTEN_ADDR must be an IP address such as 127.0.0.1 or 0.0.0.0, got \"" + raw + "\"";
        // Only a literal goes to getByName, which then parses it without a lookup.
        boolean literal = raw.matches("\\d{1,3}(\\.\\d{1,3}){3}") || raw.matches("[0-9a-fA-F:.]*:[0-9a-fA-F:.]*");
        if (!literal) {
            throw new IllegalArgumentException(refusal);
        }
        try {
            return java.net.InetAddress.getByName(raw).getHostAddress();
        } catch (java.net.UnknownHostException e) {
            throw new IllegalArgumentException(refusal);
        }
    }

    /** The JDBC URL and user for the contract's postgres://USER@HOST:PORT/DB. */
    record JdbcTarget(String url, String user) {}

    static JdbcTarget jdbcTarget(String databaseUrl) {
        Matcher m = Pattern.compile("postgres(?:ql)?://(?:([^@:/]+)(?::[^@/]*)?@)?([^/?]+)/([^?]+).*")
                .matcher(databaseUrl);
        if (!m.matches()) {
            throw new IllegalArgumentException("DATABASE_URL is not a postgres://USER@HOST:PORT/DB URL");
        }
        String user = m.group(1) == null ? System.getProperty("user.name") : m.group(1);
        return new JdbcTarget("jdbc:postgresql://" + m.group(2) + "/" + m.group(3), user);
    }
}
