package dev.lease.kubernetes;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.fabric8.kubernetes.client.VersionInfo;

/**
 * The API server's version, as {@code /version} reports it, reduced to what this backend decides on: from 1.35
 * (KEP-5504) {@code resourceVersion} is a comparable integer, so the acquiring write's {@code resourceVersion} can be
 * a fencing token.
 *
 * @param major the major version
 * @param minor the minor version
 * @param text the version as reported, for messages
 */
record ServerVersion(int major, int minor, String text) {

    /** The first version whose resourceVersions may be compared as numbers. */
    static final ServerVersion COMPARABLE_RESOURCE_VERSIONS = new ServerVersion(1, 35, "v1.35");

    /** Managed offerings report minors such as "35+": the leading digits are the version. */
    private static final Pattern LEADING_DIGITS = Pattern.compile("^\\s*(\\d+)");

    static ServerVersion of(VersionInfo info) {
        String text = info.getGitVersion() != null ? info.getGitVersion() : info.getMajor() + "." + info.getMinor();
        return new ServerVersion(number(info.getMajor(), text), number(info.getMinor(), text), text);
    }

    boolean comparesResourceVersions() {
        return major > COMPARABLE_RESOURCE_VERSIONS.major
                || major == COMPARABLE_RESOURCE_VERSIONS.major && minor >= COMPARABLE_RESOURCE_VERSIONS.minor;
    }

    private static int number(String part, String text) {
        Matcher m = part == null ? null : LEADING_DIGITS.matcher(part);
        if (m == null || !m.find()) {
            // Unknown is treated as old: the backend then only refuses CORRECTNESS, which is the safe side.
            return 0;
        }
        try {
            return Integer.parseInt(m.group(1));
        }
        catch (NumberFormatException tooLong) {
            return 0;
        }
    }
}
