package dev.lease.spi;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Strips credentials from store addresses before they reach a message or a log line: a backend (or its
 * configuration) that echoes a JDBC URL, a Redis URI or a driver's error text passes it through {@link #redact}.
 *
 * <p>Covers the syntaxes drivers use: user information in an authority ({@code postgresql://user:secret@host},
 * {@code redis://:secret@host}), Oracle's {@code thin:user/secret@host}, and secret-bearing parameters in query
 * strings, {@code ;}-separated attributes and MySQL's {@code (key=value)} form ({@code password}, {@code pwd},
 * {@code passwd}, {@code sslpassword}, {@code secret}, {@code token}, {@code key}, {@code credentials},
 * {@code auth}, in any case, also braced values such as SQL Server's {@code password={a;b}}). A redacted part reads
 * {@code ***}; everything else is left as it was, so the host, port and database are still there to diagnose.
 */
public final class Credentials {

    private static final String HIDDEN = "***";

    /** {@code scheme://userinfo@}: the user information of a URL authority, up to the last '@' before the host. */
    private static final Pattern USER_INFO = Pattern.compile("(?<scheme>[a-zA-Z][a-zA-Z0-9+.\\-]*://)"
            + "(?<userinfo>[^/?#\\s@]*)@");

    /** Oracle's {@code jdbc:oracle:thin:user/password@...} (and the oci driver's). */
    private static final Pattern ORACLE = Pattern.compile("(?<prefix>jdbc:oracle:[a-zA-Z0-9]+:)(?<userinfo>[^@\\s/]+/[^@\\s]*)@");

    /** A parameter whose name says it carries a secret, in any of the separators drivers use. */
    private static final Pattern SECRET_PARAMETER = Pattern.compile("(?i)(?<key>[a-z0-9_.\\-]*(?:password|passwd|pwd"
            + "|secret|token|credentials?|auth|private[_.\\-]?key|access[_.\\-]?key|api[_.\\-]?key)[a-z0-9_.\\-]*"
            + "\\s*=\\s*)(?<value>\\{[^}]*}?|[^&;)\\s,]*)");

    private Credentials() {
    }

    /**
     * The text with every credential it carries replaced by {@code ***}.
     *
     * @param text a URL, a connection string or an error message that may contain one; {@code null} stays null
     * @return the text without user information or secret parameters
     */
    public static String redact(String text) {
        if (text == null || text.isEmpty()) {
            return text;
        }
        String redacted = replaceGroup(ORACLE, text, "userinfo");
        redacted = replaceGroup(USER_INFO, redacted, "userinfo");
        return replaceGroup(SECRET_PARAMETER, redacted, "value");
    }

    /**
     * The text with every credential it carries replaced by {@code ***}, and every occurrence of the given secrets
     * as well: a driver's error text may quote a piece of the URL it failed to parse ({@code For input string:
     * "secret@host"}), which no pattern recognises.
     *
     * @param text a URL, a connection string or an error message; {@code null} stays null
     * @param addresses the URLs the text may have been made from (their passwords are secrets too), or configured
     *        passwords; null and empty ones are ignored
     * @return the redacted text
     */
    public static String redact(String text, String... addresses) {
        if (text == null || text.isEmpty()) {
            return text;
        }
        String redacted = text;
        for (String address : addresses) {
            if (address == null || address.isEmpty()) {
                continue;
            }
            for (String secret : secretsIn(address)) {
                redacted = redacted.replace(secret, HIDDEN);
            }
            redacted = redacted.replace(address, redact(address));
        }
        return redact(redacted);
    }

    /** The passwords and secret parameter values in an address, or the address itself when it is none (a password). */
    private static List<String> secretsIn(String address) {
        List<String> secrets = new ArrayList<>();
        Matcher oracle = ORACLE.matcher(address);
        while (oracle.find()) {
            String userinfo = oracle.group("userinfo");
            secrets.add(userinfo.substring(userinfo.indexOf('/') + 1));
        }
        Matcher userInfo = USER_INFO.matcher(address);
        while (userInfo.find()) {
            String userinfo = userInfo.group("userinfo");
            secrets.add(userinfo.substring(userinfo.indexOf(':') + 1));
        }
        Matcher parameter = SECRET_PARAMETER.matcher(address);
        while (parameter.find()) {
            String value = parameter.group("value");
            secrets.add(value.startsWith("{") ? value.substring(1, value.length() - (value.endsWith("}") ? 1 : 0))
                    : value);
        }
        boolean url = address.contains("://") || address.startsWith("jdbc:");
        if (!url) {
            secrets.add(address);
        }
        secrets.removeIf(String::isEmpty);
        return secrets;
    }

    private static String replaceGroup(Pattern pattern, String text, String group) {
        Matcher matcher = pattern.matcher(text);
        if (!matcher.find()) {
            return text;
        }
        StringBuilder out = new StringBuilder(text.length());
        int at = 0;
        do {
            if (matcher.start(group) < matcher.end(group)) {
                out.append(text, at, matcher.start(group)).append(HIDDEN);
                at = matcher.end(group);
            }
        }
        while (matcher.find());
        return out.append(text, at, text.length()).toString();
    }
}
