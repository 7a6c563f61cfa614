package corobench.vthreads;

import io.helidon.http.Header;
import io.helidon.http.HeaderNames;
import io.helidon.http.HeaderValues;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Locale;

/**
 * The Date header in IMF-fixdate form, formatted at most once a second and
 * shared by every virtual thread (the contract allows a cache of one second).
 */
final class HttpDate {
    private record Cached(long second, Header header) {}

    private volatile Cached cached = new Cached(Long.MIN_VALUE, null);

    Header header() {
        long second = System.currentTimeMillis() / 1000;
        Cached current = cached;
        if (current.second() != second) {
            current = new Cached(second, HeaderValues.create(HeaderNames.DATE, format(second)));
            cached = current;
        }
        return current.header();
    }

    // Not RFC_1123_DATE_TIME: that one writes single-digit days without the zero.
    private static final DateTimeFormatter IMF_FIXDATE =
            DateTimeFormatter.ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.ROOT).withZone(ZoneOffset.UTC);

    static String format(long epochSecond) {
        return IMF_FIXDATE.format(Instant.ofEpochSecond(epochSecond));
    }
}
