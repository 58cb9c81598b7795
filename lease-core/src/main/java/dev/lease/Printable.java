package dev.lease;

/**
 * Text taken from outside (a lease name built from request data, a fenced resource) as it may appear in a message or
 * a log line: control characters, line and paragraph separators, invisible formatting characters (Unicode category
 * Cf, such as the bidirectional overrides) and unpaired surrogates are written as a backslash, {@code u} and four hex
 * digits, so the text can neither start a new log line nor print as something else. Every message of the library
 * that echoes such text goes through it.
 */
public final class Printable {

    private Printable() {
    }

    /**
     * The printable form of a text.
     *
     * @param text the text to echo; {@code null} gives {@code "null"}
     * @return the text with the characters above escaped; the same text when it has none
     */
    public static String text(String text) {
        if (text == null) {
            return "null";
        }
        StringBuilder out = null;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            boolean pair = Character.isHighSurrogate(c) && i + 1 < text.length()
                    && Character.isLowSurrogate(text.charAt(i + 1));
            boolean escape = !pair && (Character.isISOControl(c) || hidden(c) || Character.isSurrogate(c));
            if (escape && out == null) {
                out = new StringBuilder(text.length() + 16).append(text, 0, i);
            }
            if (out != null) {
                if (escape) {
                    out.append(String.format("\\u%04X", (int) c));
                }
                else {
                    out.append(c);
                }
            }
            if (pair) {
                if (out != null) {
                    out.append(text.charAt(i + 1));
                }
                i++;
            }
        }
        return out == null ? text : out.toString();
    }

    private static boolean hidden(char c) {
        int type = Character.getType(c);
        return type == Character.FORMAT || type == Character.LINE_SEPARATOR || type == Character.PARAGRAPH_SEPARATOR;
    }
}
