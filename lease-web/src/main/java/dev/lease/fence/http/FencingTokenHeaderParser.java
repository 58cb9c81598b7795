package dev.lease.fence.http;

import static dev.lease.fence.http.FencingTokenHeader.LEASE_PARAMETER;
import static dev.lease.fence.http.FencingTokenHeader.MAX_TOKEN;
import static dev.lease.fence.http.FencingTokenHeader.NAME;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

import dev.lease.FencingToken;

/** RFC 9651 section 4.2, for the one Item the {@link FencingTokenHeader} is. */
final class FencingTokenHeaderParser {

    private final String input;
    private int at;

    FencingTokenHeaderParser(String input) {
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
