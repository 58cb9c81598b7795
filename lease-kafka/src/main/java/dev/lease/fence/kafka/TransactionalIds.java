package dev.lease.fence.kafka;

import java.nio.charset.StandardCharsets;
import java.util.regex.Pattern;

/**
 * The {@code transactional.id} of a lease name's producer: the prefix, then the name with every character other than
 * {@code A-Z a-z 0-9 _ -} percent-encoded (UTF-8), the dot and the percent sign included. The prefix ends with a dot
 * and an encoded name has none, so the last dot of an id shows where its name starts: no name under one prefix can
 * produce an id under another (a name {@code x.y} under {@code app.} would otherwise be the name {@code y} under
 * {@code app.x.}), and a prefixed ACL on the prefix covers exactly the application's fenced producers.
 */
final class TransactionalIds {

    static final String DEFAULT_PREFIX = "lease.";

    private static final Pattern PREFIX = Pattern.compile("[A-Za-z0-9._-]*\\.");

    private final String prefix;

    TransactionalIds(String prefix) {
        this.prefix = checked(prefix);
    }

    String prefix() {
        return prefix;
    }

    String of(String leaseName) {
        StringBuilder id = new StringBuilder(prefix);
        for (byte b : leaseName.getBytes(StandardCharsets.UTF_8)) {
            char c = (char) (b & 0xff);
            if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-') {
                id.append(c);
            }
            else {
                id.append('%').append(Character.toUpperCase(Character.forDigit((c >> 4) & 0xf, 16)))
                        .append(Character.toUpperCase(Character.forDigit(c & 0xf, 16)));
            }
        }
        return id.toString();
    }

    private static String checked(String prefix) {
        if (prefix == null || !PREFIX.matcher(prefix).matches()) {
            throw new IllegalArgumentException("lease.kafka.transactional-id-prefix '" + prefix + "' is not a valid "
                    + "prefix of the fenced producers' transactional ids: use letters, digits, '.', '_' and '-' only, "
                    + "ending with '.' (the default is '" + DEFAULT_PREFIX + "'), so that lease names cannot make ids "
                    + "outside it");
        }
        return prefix;
    }
}
