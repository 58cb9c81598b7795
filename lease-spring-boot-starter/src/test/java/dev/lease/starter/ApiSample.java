package dev.lease.starter;

/** As a module's public type would be, for PublicApiTest's check of its own rule. */
public class ApiSample {

    /** Anonymous: not API. */
    static final Runnable ANONYMOUS = new Runnable() {

        @Override
        public void run() {
        }
    };

    /** Public and nested in a public type: API. */
    public static class Nested {
    }

    /** Nested but private: not API. */
    private static final class Hidden {
    }

    /** Public, but in a package-private type: not API. */
    static class ApiSampleHidden {

        /** Not reachable from outside the package. */
        public static class Inner {
        }
    }
}

/** Package-private: not API. */
class ApiSampleTopLevelHidden {
}
