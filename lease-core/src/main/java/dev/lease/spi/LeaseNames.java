package dev.lease.spi;

import dev.lease.Printable;

/**
 * The rules every lease name follows whatever the backend, so that an application can move between backends
 * and no name can escape its namespace (a znode path, a key prefix), and the one way to echo a name in a message.
 *
 * <p>Names often come from request data ({@code invoice-#{#id}}), so a name must not be able to forge a log line or
 * hide what it is: besides {@code /} and the backslash, a name may not contain control characters (C0, DEL, C1), line
 * and paragraph separators (U+2028, U+2029), or invisible formatting characters (Unicode category Cf: the bidirectional
 * marks, embeddings, overrides and isolates such as U+202E, zero-width characters such as U+200B, U+2060 and
 * U+FEFF, the soft hyphen), nor unpaired surrogates. Every message that echoes a name, valid or not, goes through
 * {@link #printable(String)}.
 */
public final class LeaseNames {

    /** Longest accepted name, in characters. */
    public static final int MAX_LENGTH = 200;

    private LeaseNames() {
    }

    /**
     * Checks a lease name.
     *
     * @param name the lease name, as evaluated
     * @return the same name, when it follows the rules
     * @throws IllegalArgumentException naming the offending name and rule
     */
    public static String validate(String name) {
        if (name == null || name.isBlank()) {
            throw invalid(name, "it is blank");
        }
        if (name.length() > MAX_LENGTH) {
            throw invalid(name.substring(0, 40) + "...", "it is " + name.length() + " characters long, at most "
                    + MAX_LENGTH + " are allowed");
        }
        if (name.equals(".") || name.equals("..")) {
            throw invalid(name, "'.' and '..' are reserved path segments");
        }
        if (!name.strip().equals(name)) {
            throw invalid(name, "it starts or ends with white space");
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c == '/' || c == '\\') {
                throw invalid(name, "it contains '" + c + "', which would reach outside the lease namespace");
            }
            if (Character.isISOControl(c)) {
                throw invalid(name, "it contains the control character " + codePoint(c));
            }
            if (hidden(c)) {
                throw invalid(name, "it contains the invisible or bidirectional formatting character " + codePoint(c)
                        + ", which would make it print as another name");
            }
            if (Character.isHighSurrogate(c) && i + 1 < name.length() && Character.isLowSurrogate(name.charAt(i + 1))) {
                i++;
            }
            else if (Character.isSurrogate(c)) {
                throw invalid(name, "it contains the unpaired surrogate " + codePoint(c));
            }
        }
        return name;
    }

    /**
     * A name (or any text taken from outside, such as a fenced resource) as it may appear in a message or a log line:
     * control characters, line and paragraph separators, invisible formatting characters and unpaired surrogates are
     * written as a backslash, {@code u} and four hex digits, so the text can neither start a new log line nor print
     * as something else. Text without them comes back unchanged.
     *
     * @param text the text to echo; {@code null} gives {@code "null"}
     * @return the printable text
     */
    public static String printable(String text) {
        return Printable.text(text);
    }

    private static boolean hidden(char c) {
        int type = Character.getType(c);
        return type == Character.FORMAT || type == Character.LINE_SEPARATOR || type == Character.PARAGRAPH_SEPARATOR;
    }

    private static String codePoint(char c) {
        return String.format("U+%04X", (int) c);
    }

    private static IllegalArgumentException invalid(String name, String why) {
        return new IllegalArgumentException("Invalid lease name '" + printable(name) + "': " + why
                + ". Use letters, digits and separators such as '-', '_', ':' or '.', e.g. 'invoice-42'.");
    }
}
