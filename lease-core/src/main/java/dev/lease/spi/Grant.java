package dev.lease.spi;

import java.util.OptionalLong;

/**
 * What a backend handed out for one successful acquire. Backends return their own implementation (usually a
 * record carrying the owner id or version they need to renew and release with) and get it back in
 * {@link LeaseBackend#renew} and {@link LeaseBackend#release}.
 */
public interface Grant {

    /**
     * The lease name this grant is for.
     *
     * @return the lease name
     */
    String name();

    /**
     * The fencing token of this grant: strictly greater than every token previously granted for the same name.
     *
     * @return the token; empty exactly when the backend's {@link BackendTraits#issuesFencingTokens()} is false
     */
    OptionalLong token();
}
