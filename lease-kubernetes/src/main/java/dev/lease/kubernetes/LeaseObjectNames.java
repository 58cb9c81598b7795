package dev.lease.kubernetes;

import java.util.Locale;
import java.util.Objects;
import java.util.regex.Pattern;

import dev.lease.spi.LeaseNames;

/**
 * Maps lease names to Lease object names, {@code prefix + name}, and refuses every name that is not a valid Kubernetes
 * object name (a DNS-1123 subdomain) instead of mapping it silently: two lease names mapped to one object would share
 * one lease, and a rewritten name would not be the one an operator finds with {@code kubectl get lease}.
 */
final class LeaseObjectNames {

    /** DNS-1123 subdomain, as the API server validates {@code metadata.name} of a Lease. */
    private static final Pattern SUBDOMAIN = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");

    private static final int MAX_LENGTH = 253;

    private final String prefix;

    LeaseObjectNames(String prefix) {
        this.prefix = Objects.requireNonNull(prefix, "prefix");
        if (!prefix.isEmpty() && !valid(prefix + "a")) {
            throw new IllegalArgumentException("Invalid Lease name prefix '" + LeaseNames.printable(prefix) + "': a prefix followed by a "
                    + "lease name must be a valid Kubernetes object name (lower-case letters, digits, '-' and '.', "
                    + "starting with a letter or digit). Use a prefix such as 'lease-'.");
        }
    }

    String prefix() {
        return prefix;
    }

    /**
     * The Lease object name for a lease name.
     *
     * @throws IllegalArgumentException naming the lease, the object name it would have and the rule it breaks
     */
    String objectName(String leaseName) {
        String objectName = prefix + leaseName;
        if (objectName.length() > MAX_LENGTH) {
            throw invalid(leaseName, objectName, "it is " + objectName.length() + " characters long, at most "
                    + MAX_LENGTH + " are allowed");
        }
        if (!valid(objectName)) {
            String why = !objectName.equals(objectName.toLowerCase(Locale.ROOT)) ? "it contains upper-case letters"
                    : "only lower-case letters, digits, '-' and '.' are allowed, and it must start and end with a "
                            + "letter or digit";
            throw invalid(leaseName, objectName, why);
        }
        return objectName;
    }

    private static boolean valid(String name) {
        return SUBDOMAIN.matcher(name).matches();
    }

    private static IllegalArgumentException invalid(String leaseName, String objectName, String why) {
        return new IllegalArgumentException("Lease '" + LeaseNames.printable(leaseName) + "' cannot be held by the "
                + "kubernetes backend: its Lease object name '" + LeaseNames.printable(objectName) + "' is not a valid Kubernetes object name (" + why + "). "
                + "The backend never rewrites names; use a lease name such as 'invoice-42'.");
    }
}
