<?php
use PHPUnit\Framework\TestCase;

final class SkipTest extends TestCase
{
    public function testRuns(): void
    {
        $this->assertTrue(true);
    }

    public function testSkipped(): void
    {
        $this->markTestSkipped('needs a database');
    }
}
