package corobench.vthreads;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Map;
import org.junit.jupiter.api.Test;

class ContractTest {
    @Test
    void digestChainMatchesTheContractsReferences() {
        assertEquals("0".repeat(64), Contract.digestChain(0));
        assertEquals("66687aadf862bd776c8fc18b8e9f8e20089714856ee233b3902a591d0d5f2925", Contract.digestChain(1));
        assertEquals("36c1cb4f826ae42ceba848227e0c5f786178ca9dceca6772e5d728d09c30a2f6", Contract.digestChain(1000));
    }

    @Test
    void parametersTakeTheirDefaultWhenAbsentAndNameThemselvesWhenBad() {
        assertEquals(10, Contract.Param.MS.parse(null));
        assertEquals(1, Contract.Param.KB.parse(null));
        assertEquals(1000, Contract.Param.ITERS.parse(null));
        assertEquals(10_000, Contract.Param.MS.parse("10000"));
        assertEquals(0, Contract.Param.MS.parse("0"));
        for (String bad : new String[] {"", "-1", "10001", "1.5", "ten", "99999999999999", " 5"}) {
            var e = assertThrows(Contract.BadParameter.class, () -> Contract.Param.MS.parse(bad), bad);
            assertEquals("ms must be an integer in 0..=10000", e.getMessage());
        }
        assertThrows(Contract.BadParameter.class, () -> Contract.Param.KB.parse("0"));
        assertThrows(Contract.BadParameter.class, () -> Contract.Param.KB.parse("10241"));
    }

    @Test
    void routesAreClassifiedByPathThenMethod() {
        assertEquals(Contract.Verdict.OK, Contract.classify("GET", "/plaintext"));
        assertEquals(Contract.Verdict.OK, Contract.classify("POST", "/upload"));
        assertEquals(Contract.Verdict.METHOD_NOT_ALLOWED, Contract.classify("POST", "/plaintext"));
        assertEquals(Contract.Verdict.METHOD_NOT_ALLOWED, Contract.classify("GET", "/upload"));
        assertEquals(Contract.Verdict.NOT_FOUND, Contract.classify("GET", "/nope"));
    }

    @Test
    void threadsComeFromProcStatus() {
        assertEquals(7, Contract.threadsFromStatus("Name:\tjava\nThreads:\t7\nSigQ:\t0/1\n"));
        assertNull(Contract.threadsFromStatus("Name:\tjava\n"));
    }

    @Test
    void environmentIntegersAreCheckedAndNamed() {
        assertEquals(16, Contract.envInt(Map.of(), "DB_POOL", 16, 1024));
        assertEquals(4, Contract.envInt(Map.of("DB_POOL", "4"), "DB_POOL", 16, 1024));
        var e = assertThrows(IllegalArgumentException.class,
                () -> Contract.envInt(Map.of("DB_POOL", "0"), "DB_POOL", 16, 1024));
        assertEquals("DB_POOL must be an integer in 1..=1024, got \"0\"", e.getMessage());
    }

    @Test
    void databaseUrlsBecomeJdbcUrlsWithTheirUser() {
        var target = Contract.jdbcTarget("postgres://bench@127.0.0.1:5433/corobench");
        assertEquals("jdbc:postgresql://127.0.0.1:5433/corobench", target.url());
        assertEquals("bench", target.user());
        assertThrows(IllegalArgumentException.class, () -> Contract.jdbcTarget("mysql://x@y/z"));
    }

    @Test
    void datesAreImfFixdate() {
        assertEquals("Sun, 22 Nov 2026 06:33:00 GMT", HttpDate.format(1_795_329_180L));
        assertEquals("Sun, 01 Nov 2026 00:00:00 GMT", HttpDate.format(1_793_491_200L));
    }

    @Test
    void listensOnLoopbackUnlessTold() {
        assertEquals("127.0.0.1", Contract.listenAddr(Map.of()));
        assertEquals("127.0.0.2", Contract.listenAddr(Map.of("LISTEN_ADDR", "127.0.0.2")));
        assertEquals("0.0.0.0", Contract.listenAddr(Map.of("LISTEN_ADDR", "0.0.0.0")));
        assertThrows(IllegalArgumentException.class,
                () -> Contract.listenAddr(Map.of("LISTEN_ADDR", "localhost")));
    }
}
