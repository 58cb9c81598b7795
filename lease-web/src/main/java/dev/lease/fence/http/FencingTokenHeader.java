package dev.lease.fence.http;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import dev.lease.FencingToken;

/**
 * The {@code Fencing-Token} header: a fencing token and the lease it was issued for, as one RFC 9651 structured
 * field Item, an Integer with a {@code lease} parameter: {@code Fencing-Token: 7;lease="invoice-42"}.
 *
 * <p>The lease name is an sf-string when it is printable ASCII ({@code "} and {@code \} escaped with a backslash),
 * and an RFC 9651 Display String ({@code %"factur%c3%a9-42"}, UTF-8 percent-encoded) when it has any other
 * character: lease names may hold any character but {@code /}, {@code \} and control characters, and an sf-string
 * cannot carry non-ASCII ones. Both forms are read back to the same name.
 *
 * <p>Parsing is strict, as RFC 9651 asks: anything but exactly one Item whose value is a non-negative Integer and
 * whose {@code lease} parameter is a String or a Display String is refused as a whole. Other parameters are ignored
 * (the RFC's extension point); when {@code lease} is given twice, the last one counts, as the RFC's parsing
 * algorithm says.
 */
public final class FencingTokenHeader {

    /** The header's name. */
    public static final String NAME = "Fencing-Token";

    /** The parameter carrying the lease name. */
    public static final String LEASE_PARAMETER = "lease";

    /**
     * The largest token the header can carry: an RFC 9651 Integer has at most 15 digits. ZooKeeper versions and zxids
     * and JDBC counters stay far below it; the in-memory backend's tokens (wall-clock microseconds) do not, so it
     * cannot fence calls to other services: the auto-configured clients send such requests without the header.
     */
    public static final long MAX_TOKEN = 999_999_999_999_999L;

    private static final Log log = LogFactory.getLog(FencingTokenHeader.class);
    private static final AtomicBoolean warnedUnsendable = new AtomicBoolean();

    private FencingTokenHeader() {
    }

    /**
     * The header for a request the clients fence on the application's behalf, or empty when the token cannot be
     * sent (an in-memory lease): the request then goes without it, so that calls to services that do not fence keep
     * working, and a fenced service refuses it with 428. Logged at WARN once per JVM, then at DEBUG.
     */
    static Optional<String> formatForClients(FencingToken token) {
        try {
            return Optional.of(format(token));
        }
        catch (IllegalArgumentException unsendable) {
            if (warnedUnsendable.compareAndSet(false, true)) {
                log.warn(unsendable.getMessage()
                        + " The request goes without the header (logged once; then at DEBUG).");
            }
            else if (log.isDebugEnabled()) {
                log.debug(unsendable.getMessage());
            }
            return Optional.empty();
        }
    }

    /**
     * The header value for a token.
     *
     * @param token the token to send
     * @return such as {@code 7;lease="invoice-42"}
     * @throws IllegalArgumentException when the token is negative or above {@link #MAX_TOKEN}, or the lease name is
     *         not valid Unicode (an unpaired surrogate)
     */
    public static String format(FencingToken token) {
        Objects.requireNonNull(token, "token");
        if (token.value() < 0 || token.value() > MAX_TOKEN) {
            throw new IllegalArgumentException("Cannot send fencing token " + token.value() + " of lease '"
                    + token.lease() + "' in the " + NAME + " header: an RFC 9651 Integer holds 0 to " + MAX_TOKEN
                    + ". The in-memory backend's tokens (wall-clock microseconds) are that large; fence calls to "
                    + "other services with leases of a backend whose tokens are counters (ZooKeeper, JDBC).");
        }
        return token.value() + ";" + LEASE_PARAMETER + "=" + quote(token.lease());
    }

    /**
     * Reads a header value.
     *
     * @param value the field value, its lines joined with {@code ", "} when it was sent more than once (which then
     *        fails: the header is one Item)
     * @return the token and its lease
     * @throws IllegalArgumentException saying what is wrong and where
     */
    public static FencingToken parse(String value) {
        Objects.requireNonNull(value, "value");
        return new FencingTokenHeaderParser(value).item();
    }

    /** An sf-string when the name is printable ASCII, else a Display String. */
    static String quote(String name) {
        boolean ascii = true;
        for (int i = 0; i < name.length() && ascii; i++) {
            char c = name.charAt(i);
            ascii = c >= 0x20 && c <= 0x7E;
        }
        StringBuilder out = new StringBuilder(name.length() + 8);
        if (ascii) {
            out.append('"');
            for (int i = 0; i < name.length(); i++) {
                char c = name.charAt(i);
                if (c == '"' || c == '\\') {
                    out.append('\\');
                }
                out.append(c);
            }
            return out.append('"').toString();
        }
        ByteBuffer bytes;
        try {
            bytes = StandardCharsets.UTF_8.newEncoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).encode(CharBuffer.wrap(name));
        }
        catch (CharacterCodingException ex) {
            throw new IllegalArgumentException("Cannot send lease name '" + name + "' in the " + NAME
                    + " header: it is not valid Unicode (" + ex + ")");
        }
        out.append("%\"");
        while (bytes.hasRemaining()) {
            int b = bytes.get() & 0xFF;
            if (b == '%' || b == '"' || b < 0x20 || b > 0x7E) {
                out.append('%').append(Character.forDigit(b >> 4, 16)).append(Character.forDigit(b & 0xF, 16));
            }
            else {
                out.append((char) b);
            }
        }
        return out.append('"').toString();
    }
}
