package dev.lease;

/**
 * A lease configuration that cannot work, detected at startup (or at call time for programmatic use). Carries
 * the fix separately so that Spring Boot's failure report can show it as the "Action".
 */
public class LeaseConfigurationException extends IllegalStateException {

    /** How to fix it. */
    private final String action;

    /**
     * @param description what is wrong, naming the method, lease, property or backend at fault
     * @param action how to fix it
     */
    public LeaseConfigurationException(String description, String action) {
        super(description + " Fix: " + action);
        this.action = action;
    }

    /**
     * What is wrong, without the fix.
     *
     * @return the description given at construction
     */
    public String description() {
        String message = getMessage();
        return message.substring(0, message.length() - (" Fix: " + action).length());
    }

    /**
     * How to fix it.
     *
     * @return the action given at construction
     */
    public String action() {
        return action;
    }
}
