package dev.lease.spi;

/**
 * The rules every lease name follows whatever the backend, so that an application can move between backends
 * and no name can escape its namespace (a znode path, a key prefix).
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
                throw invalid(name, "it contains the control character U+" + String.format("%04X", (int) c));
            }
        }
        return name;
    }

    private static IllegalArgumentException invalid(String name, String why) {
        return new IllegalArgumentException("Invalid lease name '" + name + "': " + why
                + ". Use letters, digits and separators such as '-', '_', ':' or '.', e.g. 'invoice-42'.");
    }
}
