package dev.lease.autoconfigure;

import java.util.List;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The etcd backend ({@code lease.etcd.*}): one key per lease name under the key prefix, bound to an etcd lease of the
 * lease's ttl; fenced by the key's create_revision. The client is the application's io.etcd.jetcd.Client bean, else
 * one built from 'endpoints'. See {@link EtcdLeaseConfiguration}.
 */
@ConfigurationProperties("lease.etcd")
public class EtcdLeaseProperties {

    /**
     * etcd client URLs, comma-separated, such as 'http://etcd1:2379,http://etcd2:2379,http://etcd3:2379'. Not
     * needed when the application already has an io.etcd.jetcd.Client bean, which is then reused.
     */
    private @Nullable List<String> endpoints;

    /**
     * Prefix of every lease key; the key of lease 'invoice-42' is '<prefix>invoice-42'. Give the application's
     * etcd user a role with read-write permission on this prefix only.
     */
    private String keyPrefix = "/leases/";

    /** etcd settings with their defaults. */
    public EtcdLeaseProperties() {
    }

    public @Nullable List<String> getEndpoints() {
        return endpoints;
    }

    public void setEndpoints(@Nullable List<String> endpoints) {
        this.endpoints = endpoints;
    }

    public String getKeyPrefix() {
        return keyPrefix;
    }

    public void setKeyPrefix(String keyPrefix) {
        this.keyPrefix = keyPrefix;
    }
}
