package dev.lease.fence.http;

import java.io.ByteArrayOutputStream;
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
        return new Parser(value).item();
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

    /** RFC 9651 section 4.2, for the one Item this header is. */
    private static final class Parser {

        private final String input;
        private int at;

        Parser(String input) {
            this.input = input;
        }

        FencingToken item() {
            skipSpaces();
            if (at == input.length()) {
                throw fail("it is empty");
            }
            long token = integer();
            String lease = null;
            while (at < input.length() && input.charAt(at) == ';') {
                at++;
                skipSpaces();
                String key = key();
                if (at < input.length() && input.charAt(at) == '=') {
                    at++;
                    String value = bareItemAsName(key);
                    if (key.equals(LEASE_PARAMETER)) {
                        lease = value;
                    }
                }
                else if (key.equals(LEASE_PARAMETER)) {
                    // A parameter without a value is the Boolean true.
                    throw fail("the " + LEASE_PARAMETER + " parameter has no value: give the lease name as a String");
                }
            }
            skipSpaces();
            if (at < input.length()) {
                throw fail("unexpected " + describe(input.charAt(at)) + " at position " + at
                        + " (the header is one Item, sent once)");
            }
            if (lease == null) {
                throw fail("it has no " + LEASE_PARAMETER + " parameter naming the lease the token belongs to");
            }
            if (lease.isEmpty()) {
                throw fail("its " + LEASE_PARAMETER + " parameter is empty");
            }
            return new FencingToken(lease, token);
        }

        private long integer() {
            int start = at;
            if (input.charAt(at) == '-') {
                throw fail("the token is negative");
            }
            char first = input.charAt(at);
            if (first < '0' || first > '9') {
                throw fail("the token must be an Integer, found " + describe(first) + " at position " + at);
            }
            while (at < input.length() && input.charAt(at) >= '0' && input.charAt(at) <= '9') {
                at++;
                if (at - start > 15) {
                    throw fail("the token has more than 15 digits (an RFC 9651 Integer holds at most " + MAX_TOKEN
                            + ")");
                }
            }
            if (at < input.length() && input.charAt(at) == '.') {
                throw fail("the token must be an Integer, found a Decimal");
            }
            return Long.parseLong(input, start, at, 10);
        }

        /** A parameter value; the lease name's when it is one, else only checked and dropped. */
        private String bareItemAsName(String key) {
            if (at >= input.length()) {
                throw fail("the parameter " + key + " has no value after '='");
            }
            char c = input.charAt(at);
            if (c == '"') {
                return string();
            }
            if (c == '%' && at + 1 < input.length() && input.charAt(at + 1) == '"') {
                return displayString();
            }
            if (key.equals(LEASE_PARAMETER)) {
                throw fail("the " + LEASE_PARAMETER + " parameter must be a String (\"invoice-42\"), found "
                        + describe(c) + " at position " + at);
            }
            otherBareItem(key);
            return null;
        }

        /** Integer, Decimal, Token, Byte Sequence, Boolean or Date: valid syntax, value ignored. */
        private void otherBareItem(String key) {
            char c = input.charAt(at);
            int start = at;
            if (c == '-' || (c >= '0' && c <= '9')) {
                at++;
                while (at < input.length() && (isDigit(input.charAt(at)) || input.charAt(at) == '.')) {
                    at++;
                }
                String number = input.substring(start, at);
                if (!number.matches("-?\\d{1,15}|-?\\d{1,12}\\.\\d{1,3}")) {
                    throw fail("the parameter " + key + " has an invalid number at position " + start);
                }
            }
            else if (c == '*' || isAlpha(c)) {
                at++;
                while (at < input.length() && isTokenChar(input.charAt(at))) {
                    at++;
                }
            }
            else if (c == ':') {
                int end = input.indexOf(':', at + 1);
                if (end < 0 || !input.substring(at + 1, end).matches("[A-Za-z0-9+/=]*")) {
                    throw fail("the parameter " + key + " has an invalid Byte Sequence at position " + start);
                }
                at = end + 1;
            }
            else if (c == '?') {
                if (at + 1 >= input.length() || (input.charAt(at + 1) != '0' && input.charAt(at + 1) != '1')) {
                    throw fail("the parameter " + key + " has an invalid Boolean at position " + start);
                }
                at += 2;
            }
            else if (c == '@') {
                at++;
                if (at >= input.length()) {
                    throw fail("the parameter " + key + " has an invalid Date at position " + start);
                }
                otherBareItem(key);
                if (!input.substring(start + 1, at).matches("-?\\d{1,15}")) {
                    throw fail("the parameter " + key + " has an invalid Date at position " + start);
                }
            }
            else {
                throw fail("the parameter " + key + " has an invalid value: " + describe(c) + " at position " + at);
            }
        }

        private String string() {
            int start = at++;
            StringBuilder out = new StringBuilder();
            while (at < input.length()) {
                char c = input.charAt(at++);
                if (c == '\\') {
                    if (at >= input.length()) {
                        break;
                    }
                    char escaped = input.charAt(at++);
                    if (escaped != '"' && escaped != '\\') {
                        throw fail("the String at position " + start + " has an invalid escape \\" + escaped
                                + " (only \\\" and \\\\ are allowed)");
                    }
                    out.append(escaped);
                }
                else if (c == '"') {
                    return out.toString();
                }
                else if (c < 0x20 || c > 0x7E) {
                    throw fail("the String at position " + start + " has " + describe(c)
                            + ", outside printable ASCII (non-ASCII names are sent as a Display String, %\"...\")");
                }
                else {
                    out.append(c);
                }
            }
            throw fail("the String at position " + start + " is not closed");
        }

        private String displayString() {
            int start = at;
            at += 2;
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            while (at < input.length()) {
                char c = input.charAt(at++);
                if (c < 0x20 || c > 0x7E) {
                    throw fail("the Display String at position " + start + " has " + describe(c)
                            + ", outside printable ASCII");
                }
                if (c == '%') {
                    if (at + 2 > input.length() || !isLowerHex(input.charAt(at)) || !isLowerHex(input.charAt(at + 1))) {
                        throw fail("the Display String at position " + start + " has '%' not followed by two "
                                + "lowercase hex digits");
                    }
                    bytes.write(Integer.parseInt(input, at, at + 2, 16));
                    at += 2;
                }
                else if (c == '"') {
                    try {
                        return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                                .onUnmappableCharacter(CodingErrorAction.REPORT)
                                .decode(ByteBuffer.wrap(bytes.toByteArray())).toString();
                    }
                    catch (CharacterCodingException ex) {
                        throw fail("the Display String at position " + start + " is not valid UTF-8");
                    }
                }
                else {
                    bytes.write(c);
                }
            }
            throw fail("the Display String at position " + start + " is not closed");
        }

        private String key() {
            int start = at;
            if (at >= input.length() || !(input.charAt(at) == '*' || isLowerAlpha(input.charAt(at)))) {
                throw fail("expected a parameter name (lowercase) at position " + at);
            }
            at++;
            while (at < input.length()) {
                char c = input.charAt(at);
                if (!(isLowerAlpha(c) || isDigit(c) || c == '_' || c == '-' || c == '.' || c == '*')) {
                    break;
                }
                at++;
            }
            return input.substring(start, at);
        }

        private void skipSpaces() {
            while (at < input.length() && input.charAt(at) == ' ') {
                at++;
            }
        }

        private IllegalArgumentException fail(String why) {
            return new IllegalArgumentException("Malformed " + NAME + " header: " + why
                    + ". Expected an RFC 9651 Item such as 7;lease=\"invoice-42\".");
        }

        private static String describe(char c) {
            return c >= 0x21 && c <= 0x7E ? "'" + c + "'" : String.format("U+%04X", (int) c);
        }

        private static boolean isDigit(char c) {
            return c >= '0' && c <= '9';
        }

        private static boolean isLowerAlpha(char c) {
            return c >= 'a' && c <= 'z';
        }

        private static boolean isAlpha(char c) {
            return isLowerAlpha(c) || (c >= 'A' && c <= 'Z');
        }

        private static boolean isLowerHex(char c) {
            return isDigit(c) || (c >= 'a' && c <= 'f');
        }

        /** RFC 9110 tchar, plus ':' and '/' as RFC 9651 Tokens allow. */
        private static boolean isTokenChar(char c) {
            return isAlpha(c) || isDigit(c) || "!#$%&'*+-.^_`|~:/".indexOf(c) >= 0;
        }
    }
}
