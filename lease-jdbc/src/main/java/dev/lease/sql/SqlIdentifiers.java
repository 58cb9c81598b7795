package dev.lease.sql;

import java.util.regex.Pattern;

/**
 * Checks the SQL identifiers (table and column names) the library writes into SQL text. Values always travel as
 * bind parameters; identifiers cannot, so they are restricted to plain unquoted names that cannot carry anything
 * but a name. Shared by the lease backend and the resource-side fences; not meant for application code.
 */
public final class SqlIdentifiers {

    /** Longest accepted identifier, schema included. */
    public static final int MAX_LENGTH = 128;

    private static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

    private static final Pattern QUALIFIED = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)?");

    private SqlIdentifiers() {
    }

    /**
     * Checks a table name, optionally schema-qualified ({@code leases.lease_lock}).
     *
     * @param what how to name the setting in the error, e.g. {@code lease.jdbc.table}
     * @throws IllegalArgumentException saying what is accepted
     */
    public static String table(String name, String what) {
        return check(name, QUALIFIED, what, "a table name, optionally schema-qualified, such as 'lease_lock' or "
                + "'leases.lease_lock'");
    }

    /**
     * Checks a column name.
     *
     * @throws IllegalArgumentException saying what is accepted
     */
    public static String column(String name, String what) {
        return check(name, NAME, what, "a plain column name such as 'fence'");
    }

    private static String check(String name, Pattern pattern, String what, String expected) {
        if (name == null || name.length() > MAX_LENGTH || !pattern.matcher(name).matches()) {
            String shown = name == null ? "null" : name.length() > 60 ? name.substring(0, 60) + "..." : name;
            throw new IllegalArgumentException("Invalid " + what + " '" + shown + "': expected " + expected
                    + " (letters, digits and '_', not starting with a digit, at most " + MAX_LENGTH
                    + " characters, unquoted)");
        }
        return name;
    }
}
